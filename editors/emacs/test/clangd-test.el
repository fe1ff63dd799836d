;;; clangd-test.el --- Batch test: eglot with the real clangd-19 behind `hydra lsp' -*- lexical-binding: t; -*-

;;; Commentary:

;; emacs --batch -l editors/emacs/test/clangd-test.el   (run.sh sets up the environment, as for
;; hydra-test.el: HYDRA_TEST_CMD, HYDRA_TEST_DIR, HYDRA_TEST_EXPECTED, HYDRA_MODEL_URL).
;;
;; eglot runs one server per major mode, so `hydra lsp' is the only C++ server and fronts
;; clangd (hydra.el turns `hydra-clangd' on by default).  In one session, as a user does it:
;; M-. on a call jumps to the definition; a typed error gets clangd's diagnostic; completion at
;; std::vec offers vector; M-x hydra-generate repairs and clangd's diagnostics are clean after
;; it; clangd killed mid-session, generation still works, and clangd comes back.

;;; Code:

(load (expand-file-name "hydra-test-lib" (file-name-directory (or load-file-name buffer-file-name))) nil t)

(defun hydra-test-diags (&optional source)
  "The texts of this buffer's diagnostics as eglot last got them (from SOURCE only)."
  (cl-loop for d in eglot--diagnostics
           for text = (flymake-diagnostic-text d)
           when (or (null source) (string-prefix-p source text))
           collect text))

(defun hydra-test-wait-diag (regexp seconds)
  "Wait up to SECONDS for a clangd diagnostic matching REGEXP."
  (hydra-test-wait
   (lambda ()
     (hydra--flush-changes)
     (cl-some (lambda (s) (string-match-p regexp s)) (hydra-test-diags "clang")))
   seconds))

(defun hydra-test-child-pid (name)
  "The pid of the live child named NAME… of the buffer's hydra lsp, or nil."
  (let ((server-pid (process-id (jsonrpc--process (eglot-current-server)))))
    (cl-loop for pid in (list-system-processes)
             for attrs = (process-attributes pid)
             when (and (eql (alist-get 'ppid attrs) server-pid)
                       (string-prefix-p name (or (alist-get 'comm attrs) ""))
                       (not (equal (alist-get 'state attrs) "Z")))
             return pid)))

(defun hydra-test-clangd-pid ()
  "The pid of the clangd that the buffer's hydra lsp runs, or nil."
  (hydra-test-child-pid "clangd"))

(defun hydra-test-definition-line ()
  "Put point on the call of twice, type M-., return the line point lands on."
  (goto-char (point-min))
  (search-forward "return twice")
  (backward-char 2)
  (condition-case err
      (progn (execute-kbd-macro (kbd "M-.")) (line-number-at-pos))
    (error (error-message-string err))))

(defconst hydra-test-calls
  "#include <vector>

int twice(int x) { return 2 * x; }

int main() {
  std::vector<int> v{1, 2};
  return twice(v[0]);
}
"
  "The program the navigation checks run in.")

(defun hydra-test-generate (file expected)
  "Run M-x hydra-generate in FILE; check the buffer becomes EXPECTED."
  (hydra-test-visit file)
  (goto-char (point-max))
  (forward-line -1)
  (hydra-generate)
  (hydra-test-check (hydra-test-wait (lambda () hydra-last-result) 120)
                    (format "the generation in %s ends" (file-name-nondirectory file)))
  (hydra-test-check (eq (plist-get hydra-last-result :ok) t) "the result says ok" hydra-last-result)
  (hydra-test-check (equal (buffer-substring-no-properties (point-min) (point-max)) expected)
                    "the buffer equals the expected program" (buffer-string)))

(defun hydra-test-run ()
  "Run the checks."
  (let* ((dir (file-name-as-directory (hydra-test-env "HYDRA_TEST_DIR")))
         (expected (with-temp-buffer
                     (insert-file-contents-literally (hydra-test-env "HYDRA_TEST_EXPECTED"))
                     (buffer-string)))
         (calls (concat dir "calls.cpp")))
    (with-temp-file calls (insert hydra-test-calls))
    (hydra-test-visit calls)
    (hydra-test-check (cl-typep (eglot-current-server) 'hydra-eglot-server)
                      "eglot manages calls.cpp with hydra lsp")
    (hydra-test-check (eglot--server-capable :definitionProvider)
                      "the one server offers definitions (clangd's)")
    (hydra-test-check (eglot--server-capable :executeCommandProvider)
                      "and Hydra's commands")
    ;; eglot's C/C++ server runs clangd behind it, not TypeScript's server (that one is the
    ;; TypeScript entry's: hydra--server-language).
    (hydra-test-check (hydra-test-wait #'hydra-test-clangd-pid 30) "clangd runs behind hydra lsp")
    (hydra-test-check (null (hydra-test-child-pid "tsc"))
                      "and no TypeScript server does (the buffers are C/C++)")

    ;; 1. M-. on the call jumps to the definition.
    (let ((line (hydra-test-definition-line)))
      (hydra-test-check (equal line 3) "M-. on twice(...) jumps to its definition on line 3" line))
    (find-file calls)

    ;; 2. A typed error gets clangd's diagnostic.
    (goto-char (point-min))
    (search-forward "return twice")
    (beginning-of-line)
    (execute-kbd-macro "  undeclared_fn();\n")
    (hydra-test-check (hydra-test-wait-diag "undeclared_fn" 60)
                      "the typed error gets clangd's diagnostic" (hydra-test-diags))
    (undo-boundary)
    (delete-region (line-beginning-position 0) (line-beginning-position))
    (hydra-test-check (equal (buffer-string) hydra-test-calls) "the typed line is taken out again")
    (hydra-test-check (hydra-test-wait (lambda () (hydra--flush-changes) (null (hydra-test-diags "clang"))) 60)
                      "and its diagnostic goes" (hydra-test-diags))

    ;; 3. Completion at std::vec offers vector.
    (search-forward "return twice")
    (beginning-of-line)
    (execute-kbd-macro "  std::vec")
    (hydra--flush-changes)
    (let* ((capf (eglot-completion-at-point))
           (cands (and capf (all-completions "" (nth 2 capf)))))
      (hydra-test-check (cl-some (lambda (c) (string-prefix-p "vector" (string-trim c))) cands)
                        "completion at std::vec offers vector" cands))
    (delete-region (line-beginning-position) (point))
    (hydra--flush-changes)

    ;; 4. Generate with repair; clangd's diagnostics are clean after it.
    (hydra-test-visit (concat dir "sum.cpp"))
    (hydra-test-check (hydra-test-wait-diag "expected" 60)
                      "clangd reports the unfinished function before generating" (hydra-test-diags))
    (hydra-test-generate (concat dir "sum.cpp") expected)
    (hydra-test-check (hydra-test-wait (lambda () (hydra--flush-changes) (null (hydra-test-diags "clang"))) 60)
                      "clangd's diagnostics are clean after the generation" (hydra-test-diags))

    ;; 5. clangd killed mid-session: generation still works, clangd comes back.
    (find-file calls)
    (let ((old (hydra-test-clangd-pid)))
      (hydra-test-check old "clangd runs under hydra lsp")
      (when old (signal-process old 'SIGKILL))
      (hydra-test-check (hydra-test-wait (lambda () (not (eql (hydra-test-clangd-pid) old))) 10)
                        "the killed clangd is gone")
      (copy-file (concat dir "sum.cpp") (concat dir "again.cpp") t) ; the buffer was not saved
      (hydra-test-generate (concat dir "again.cpp") expected)
      (find-file calls)
      (let ((new (hydra-test-wait (lambda () (let ((p (hydra-test-clangd-pid))) (and p (not (eql p old)) p))) 60)))
        (hydra-test-check new "clangd is restarted" (list old new)))
      (hydra-test-check (hydra-test-wait (lambda () (equal (hydra-test-definition-line) 3)) 60)
                        "M-. works again after the restart")
      (find-file calls)
      ;; The server says so once it has noticed clangd's end; under load that notice may
      ;; trail the generation, so wait for it.
      (hydra-test-check
       (hydra-test-wait (lambda ()
                          (with-current-buffer "*Messages*"
                            (string-match-p "clangd stopped" (buffer-string))))
                        30)
       "the user was told that clangd stopped"))))

(hydra-test-main #'hydra-test-run)

;;; clangd-test.el ends here
