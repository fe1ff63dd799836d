;;; hydra-test.el --- Batch end-to-end test of hydra.el against the real `hydra lsp' -*- lexical-binding: t; -*-

;;; Commentary:

;; emacs --batch -l editors/emacs/test/hydra-test.el   (without -Q: site-start loads Debian's eglot)
;;
;; editors/emacs/test/run.sh sets it up: a scripted stand-in model served by `hydra sim-server',
;; a work directory with the test files.  Environment:
;;   HYDRA_TEST_CMD       the server command ("…/bin/hydra lsp")
;;   HYDRA_TEST_DIR       the work directory holding sum.cpp and slow.cpp
;;   HYDRA_TEST_EXPECTED  the buffer text expected after generating in sum.cpp
;;   HYDRA_MODEL_URL, HYDRA_MODEL, HYDRA_CLANG
;;   HYDRA_TEST_OPENER    a stand-in for the desktop opener (xdg-open): it appends the file it
;;                        is given to HYDRA_TEST_OPENED
;;   XDG_CACHE_HOME       the user's cache directory, where the server draws its searches
;; It checks, through eglot and hydra.el: M-x hydra-generate (repair by the real checker; the
;; buffer must equal the expected program and compile; its summary offers `hydra-show-trace',
;; which hands the picture of the search to `hydra-trace-opener'), the inline completion path (ghost text
;; shown, dismissed by typing, a word accepted with M-f, a line with C-e, the rest with TAB), a settings change reaching the running server
;; (a plain setq), hydra-cancel, and on Emacs 29+ with Debian's tree-sitter-c-src
;; (HYDRA_TEST_TS_C_SRC) a repaired generation in sum.c under `c-ts-mode'.  The set-up is the
;; README's snippet as written.  One "ok"/"not ok" line per
;; check; the exit status is 1 when any failed.

;;; Code:

(load (expand-file-name "hydra-test-lib" (file-name-directory (or load-file-name buffer-file-name))) nil t)

(defun hydra-test-file-string (file)
  "The contents of FILE."
  (with-temp-buffer (insert-file-contents-literally file) (buffer-string)))

(defun hydra-test-compiles (text &optional lang)
  "Return (OK . OUTPUT) of clang -fsyntax-only on TEXT, as C++17 or, LANG \"c\", as C17."
  (let ((f (make-temp-file "hydra-emacs-" nil (if (equal lang "c") ".c" ".cpp") text)))
    (with-temp-buffer
      (let ((rc (call-process (or (getenv "HYDRA_CLANG") "clang-19") nil t nil
                              "-fsyntax-only" (if (equal lang "c") "-std=c17" "-std=c++17") f)))
        (cons (eq rc 0) (buffer-string))))))

(defun hydra-test-goto-last-line ()
  "Put point at the start of the buffer's last line (the blank line the body goes on)."
  (goto-char (point-max))
  (forward-line -1))

(defun hydra-test-show-trace (dir)
  "Check that the summary offers the search's picture and `hydra-show-trace' opens it.
DIR is the project."
  (let ((trace (plist-get hydra-last-result :trace))
        (opened-file (hydra-test-env "HYDRA_TEST_OPENED"))
        (cache (file-name-as-directory (hydra-test-env "XDG_CACHE_HOME"))))
    (hydra-test-check (stringp trace) "the result names the picture of the search" hydra-last-result)
    (hydra-test-check (with-current-buffer "*Messages*"
                        (save-excursion
                          (goto-char (point-max))
                          (re-search-backward
                           "^Hydra: accepted .*; M-x hydra-show-trace shows the search$" nil t)))
                      "the summary offers M-x hydra-show-trace")
    ;; Batch Emacs shows no images: the picture goes to the opener.  (What earlier
    ;; cases opened does not count.)
    (write-region "" nil opened-file nil 'silent)
    (let ((hydra-trace-opener (hydra-test-env "HYDRA_TEST_OPENER")))
      (hydra-show-trace))
    (let ((opened (hydra-test-wait
                   (lambda ()
                     (and (file-exists-p opened-file)
                          (car (split-string (hydra-test-file-string opened-file) "\n" t))))
                   10)))
      (hydra-test-check (equal opened trace) "hydra-show-trace hands the opener the picture's path"
                        (format "%S, want %S" opened trace)))
    (let ((hydra-trace-opener "/nonexistent/opener"))
      (hydra-test-check (string-match-p "\\`Hydra: cannot open .*: no /nonexistent/opener on PATH"
                                        (condition-case e (hydra-show-trace) (user-error (cadr e))))
                        "hydra-show-trace with a missing opener says so"))
    (when (stringp trace)
      (hydra-test-check (and (string-prefix-p (concat cache "hydra/traces/") trace)
                             (string-suffix-p ".svg" trace))
                        "the picture is an SVG file in the user's cache directory" trace)
      (hydra-test-check (not (string-prefix-p dir trace)) "the picture is not in the project" trace)
      (let ((svg (if (file-readable-p trace) (hydra-test-file-string trace) "")))
        (hydra-test-check (and (string-match-p "<svg" svg) (string-match-p "sum\\.cpp" svg)
                               (string-match-p "undeclared identifier" svg)
                               (string-match-p "totl" svg))
                          "it is the picture of this search: an SVG naming sum.cpp and the checker's error"
                          (substring svg 0 (min 300 (length svg))))))))

(defun hydra-test-run ()
  "Run the checks."
  (let* ((dir (file-name-as-directory (hydra-test-env "HYDRA_TEST_DIR")))
         (expected (hydra-test-file-string (hydra-test-env "HYDRA_TEST_EXPECTED")))
         (generated (with-temp-buffer
                      (insert-file-contents-literally (concat dir "sum.cpp"))
                      ;; The text the model ends with: expected minus the prompt's final newline.
                      (substring expected (1- (buffer-size)) (1- (length expected))))))
    ;; 1. M-x hydra-generate
    (hydra-test-visit (concat dir "sum.cpp"))
    (hydra-test-check (derived-mode-p 'c++-mode) "sum.cpp opens in c++-mode" major-mode)
    (hydra-test-check (cl-typep (eglot-current-server) 'hydra-eglot-server)
                      "eglot manages the buffer with hydra lsp" (eglot-current-server))
    (hydra-test-goto-last-line)
    (hydra-test-check (equal (condition-case e (hydra-show-trace) (user-error (cadr e)))
                             "Hydra: no picture of a search yet: M-x hydra-generate draws one")
                      "hydra-show-trace before any generation says there is no picture yet")
    (hydra-generate)
    (hydra-test-check hydra--generating "hydra-generate starts a generation")
    (hydra-test-check (hydra-test-wait (lambda () hydra-last-result) 120) "the generation ends")
    (let ((r hydra-last-result))
      (hydra-test-check (eq (plist-get r :ok) t) "the result says ok" r)
      (hydra-test-check (>= (or (plist-get r :attempts) 0) 2)
                        "the checker made the model repair (attempts >= 2)" r))
    (let ((text (buffer-substring-no-properties (point-min) (point-max))))
      (hydra-test-check (equal text expected) "the buffer equals the expected program"
                        (format "\n--- got\n%s--- want\n%s" text expected))
      (let ((c (hydra-test-compiles text)))
        (hydra-test-check (car c) "the buffer compiles with clang" (cdr c))))
    (hydra-test-check hydra-progress-log "work-done progress was shown" hydra-progress-log)
    (hydra-test-check (equal hydra-status "Hydra: done") "the mode line reports the end" hydra-status)
    (hydra-test-show-trace dir)

    ;; 2. Inline completion: ghost text, dismissed by typing, accepted with TAB.
    (copy-file (concat dir "sum.cpp") (concat dir "inline.cpp") t)
    (hydra-test-visit (concat dir "inline.cpp"))
    (hydra-test-check (cl-typep (eglot-current-server) 'hydra-eglot-server)
                      "a second buffer of the project is managed too")
    ;; Point is on a blank line with its own line break: the item ends without its final
    ;; break (the line's own ends it), so the result has no blank line after the code.
    (let ((before (buffer-string))
          (generated (substring generated 0 -1))
          (expected (substring expected 0 -1)))
      (hydra-test-goto-last-line)
      (hydra-inline-complete)
      (hydra-test-check (hydra-test-wait #'hydra-inline-ghost-text 120)
                        "inline completion shows ghost text")
      (hydra-test-check (equal (substring-no-properties (or (hydra-inline-ghost-text) "")) generated)
                        "the ghost text is the repaired completion"
                        (format "%S, want %S" (hydra-inline-ghost-text) generated))
      (hydra-test-check (equal (buffer-string) before) "ghost text does not change the buffer")
      (execute-kbd-macro "x")
      (hydra-test-check (null (hydra-inline-ghost-text)) "typing dismisses the ghost text")
      (hydra-test-check (equal (buffer-string)
                               (concat (substring before 0 (- (point) 2)) "x" (substring before (- (point) 2))))
                        "the typed character is inserted" (buffer-string))
      (delete-char -1)
      (hydra-inline-complete)
      (hydra-test-check (hydra-test-wait #'hydra-inline-ghost-text 120) "ghost text is shown again")
      ;; copilot.el's partial accepts: M-f a word, C-e the rest of the line; the rest stays shown.
      (let ((line-start (line-beginning-position)))
        (execute-kbd-macro (kbd "M-f"))
        (hydra-test-check (equal (buffer-substring-no-properties line-start (point)) "  int")
                          "M-f (hydra-inline-accept-by-word) inserts the first word"
                          (buffer-substring-no-properties line-start (point)))
        (hydra-test-check (string-prefix-p " total = 0;\n" (or (hydra-inline-ghost-text) ""))
                          "the rest stays shown as ghost text" (hydra-inline-ghost-text))
        (execute-kbd-macro (kbd "C-e"))
        (hydra-test-check (equal (buffer-substring-no-properties line-start (point)) "  int total = 0;\n")
                          "C-e (hydra-inline-accept-by-line) inserts the rest of the line"
                          (buffer-substring-no-properties line-start (point)))
        (hydra-test-check (hydra-inline-ghost-text) "the lines after stay shown"))
      (execute-kbd-macro (kbd "TAB"))
      (hydra-test-check (null (hydra-inline-ghost-text)) "TAB removes the ghost text")
      (hydra-test-check (equal (buffer-string) expected) "TAB inserts the completion"
                        (format "\n--- got\n%s--- want\n%s" (buffer-string) expected)))

    ;; 2b. hydra-inline-mode asks by itself after typing (its idle timer is fired here: batch
    ;; Emacs is never idle).
    (copy-file (concat dir "sum.cpp") (concat dir "auto.cpp") t)
    (hydra-test-visit (concat dir "auto.cpp"))
    (hydra-inline-mode 1)
    (hydra-test-goto-last-line)
    (execute-kbd-macro (kbd "RET"))
    (hydra-test-check (timerp hydra--inline-timer) "typing in hydra-inline-mode schedules a request")
    (when (timerp hydra--inline-timer)
      (timer-event-handler hydra--inline-timer))
    (hydra-test-check (hydra-test-wait #'hydra-inline-ghost-text 120)
                      "hydra-inline-mode shows ghost text after a pause")
    (execute-kbd-macro (kbd "TAB"))
    (hydra-test-check (let ((c (hydra-test-compiles (buffer-string)))) (car c))
                      "accepting it gives a program that compiles" (buffer-string))
    (hydra-inline-mode -1)

    ;; 3. Settings reach the running server: point it at a port where no model listens.
    (copy-file (concat dir "sum.cpp") (concat dir "settings.cpp") t)
    (hydra-test-visit (concat dir "settings.cpp"))
    (let ((good hydra-model-url)
          (before (buffer-string)))
      (unwind-protect
          (progn
            ;; A plain setq, as in the README: the running server hears of it.
            (setq hydra-model-url "http://127.0.0.1:9/v1")
            (hydra-test-wait (lambda () (null hydra--configuration-timer)) 5)
            (hydra-test-goto-last-line)
            (hydra-generate)
            (hydra-test-wait (lambda () (not hydra--generating)) 60)
            (let ((r hydra-last-result))
              (hydra-test-check (and r (not (eq (plist-get r :ok) t)))
                                "with the model URL changed, generation fails" r)
              (hydra-test-check (string-match-p "127\\.0\\.0\\.1:9\\b" (format "%S" r))
                                "the server used the changed hydra-model-url" r))
            (hydra-test-check (equal (buffer-string) before)
                              "a failed generation leaves the buffer as it was"))
        (setq hydra-model-url good)
        (hydra-test-wait (lambda () (null hydra--configuration-timer)) 5)))

    ;; 4. hydra-cancel on a slowly answered prompt.
    (hydra-test-visit (concat dir "slow.cpp"))
    (let ((before (buffer-string)))
      (hydra-test-goto-last-line)
      (hydra-generate)
      (hydra-test-wait (lambda () (or hydra-progress-log (not hydra--generating))) 20)
      (hydra-test-check hydra--generating "the slow generation is running before hydra-cancel")
      (hydra-cancel)
      (hydra-test-check (hydra-test-wait (lambda () (not hydra--generating)) 30)
                        "hydra-cancel ends the generation")
      (let ((r hydra-last-result))
        (hydra-test-check (and r (not (eq (plist-get r :ok) t)) (not (plist-get r :error)))
                          "the cancelled generation reports not ok" r)
        (hydra-test-check (string-match-p "cancel" (format "%s" (plist-get r :reason)))
                          "the reason says cancelled" r))
      (hydra-test-check (string-prefix-p (substring before 0 (1- (length before))) (buffer-string))
                        "the text before point is intact" (buffer-string)))))

(defun hydra-test-c-ts-mode (dir)
  "C in `c-ts-mode' (Emacs 29+): the README's tree-sitter snippet, then a generation in sum.c.
The C grammar is built as the README says, from Debian's tree-sitter-c-src (the directory in
HYDRA_TEST_TS_C_SRC), with `treesit-install-language-grammar' into a temporary directory.
DIR is the project."
  (let ((src (getenv "HYDRA_TEST_TS_C_SRC")))
    (cond
     ((not (fboundp 'treesit-available-p))
      (princ (format "# c-ts-mode: Emacs %s has no tree-sitter modes\n" emacs-version)))
     ((or (null src) (string-empty-p src))
      (princ "# c-ts-mode: not checked, no C grammar source here (apt install tree-sitter-c-src)\n"))
     (t
      (require 'treesit)
      (let ((out (make-temp-file "hydra-treesit-" t))
            (expected (hydra-test-file-string (concat dir "sum.expected.c"))))
        (hydra-test-check (treesit-available-p) "this Emacs is built with tree-sitter")
        ;; The README's recipe, with clang-19 as the compiler (the Debian 13 root has no cc).
        (setq treesit-language-source-alist
              `((c ,src nil nil ,(or (getenv "HYDRA_CLANG") "clang-19"))))
        (add-to-list 'treesit-extra-load-path out)
        (treesit-install-language-grammar 'c out)
        (hydra-test-check (treesit-language-available-p 'c)
                          "the C grammar builds from the packaged source" out)
        (eval (car (read-from-string (concat "(progn\n" (hydra-test-readme-ts-snippet) "\n)"))) t)
        (hydra-test-visit (concat dir "sum.c"))
        (hydra-test-check (eq major-mode 'c-ts-mode) "sum.c opens in c-ts-mode" major-mode)
        (hydra-test-check (cl-typep (eglot-current-server) 'hydra-eglot-server)
                          "eglot manages the c-ts-mode buffer with hydra lsp" (eglot-current-server))
        (hydra-test-goto-last-line)
        (setq hydra-last-result nil)
        (hydra-generate)
        (hydra-test-check (hydra-test-wait (lambda () hydra-last-result) 120)
                          "the generation in c-ts-mode ends")
        (let ((r hydra-last-result))
          (hydra-test-check (eq (plist-get r :ok) t) "c-ts-mode: the result says ok" r)
          (hydra-test-check (>= (or (plist-get r :attempts) 0) 2)
                            "c-ts-mode: the checker made the model repair (attempts >= 2)" r))
        ;; `restrict' in the answer is C only: the server checked the buffer as C.
        (let ((text (buffer-substring-no-properties (point-min) (point-max))))
          (hydra-test-check (equal text expected) "c-ts-mode: the buffer equals the expected C program"
                            (format "\n--- got\n%s--- want\n%s" text expected))
          (let ((c (hydra-test-compiles text "c")))
            (hydra-test-check (car c) "c-ts-mode: the buffer compiles as C" (cdr c)))))))))

(defun hydra-test-run-all ()
  "Run the checks, then the `c-ts-mode' ones."
  (hydra-test-run)
  (hydra-test-c-ts-mode (file-name-as-directory (hydra-test-env "HYDRA_TEST_DIR"))))

(hydra-test-main #'hydra-test-run-all)

;;; hydra-test.el ends here
