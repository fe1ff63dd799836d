;;; tui.el --- The user's config for the terminal tests  -*- lexical-binding: t; -*-

;;; Commentary:

;; editors/emacs/test/run.sh (cases "tui-*") runs Emacs in tmux at 80x24:
;;
;;   emacs -nw -q -l editors/emacs/test/tui.el FILE
;;
;; and types into it as a person would.  This file sets Emacs up with the
;; README's snippet (readme-snippet.el) and reports what the editor is doing:
;; every 50 ms it writes $HYDRA_TEST_STATE (JSON): the buffer's text, point,
;; the major mode, the generation's state, the buffer's line counts while it
;; ran, the ghost text, how many inline completion requests were sent and
;; cancelled.  It asserts nothing: run.sh does.  With HYDRA_TEST_TYPESCRIPT set
;; it loads typescript.el (the README's TypeScript snippet) too.

;;; Code:

(require 'cl-lib)
(require 'json)

(setq make-backup-files nil
      create-lockfiles nil
      auto-save-default nil
      inhibit-startup-screen t)

(load (expand-file-name "readme-snippet" (file-name-directory (or load-file-name buffer-file-name)))
      nil t)
(hydra-test-eval-readme-snippet)
(when (getenv "HYDRA_TEST_TYPESCRIPT")
  (load (expand-file-name "typescript" (file-name-directory (or load-file-name buffer-file-name))) nil t))

(defvar hydra-test-counts (list :inline-requests 0 :cancels 0 :generating-seen nil
                                :inline-status-seen nil)
  "What the test counts.")

(defun hydra-test--count (key)
  "Add one to KEY of `hydra-test-counts'."
  (setq hydra-test-counts
        (plist-put hydra-test-counts key (1+ (plist-get hydra-test-counts key)))))

(advice-add 'jsonrpc-async-request :before
            (lambda (_conn method &rest _)
              (when (eq method :textDocument/inlineCompletion)
                (hydra-test--count :inline-requests))))
(advice-add 'jsonrpc-notify :before
            (lambda (_conn method &rest _)
              (when (eq method :$/cancelRequest)
                (hydra-test--count :cancels))))

(defvar hydra-test-line-counts nil
  "The line counts a file's buffer had after each change while a generation ran.
A generation whose edits stream in leaves counts between the first and the last.")

(add-hook 'after-change-functions
          (lambda (&rest _)
            (when (and buffer-file-name hydra--generating)
              ;; (eglot applies an edit in a buffer narrowed to its range)
              (save-restriction
                (widen)
                (cl-pushnew (count-lines (point-min) (point-max)) hydra-test-line-counts)))))

(defun hydra-test--json-value (v)
  "V as JSON: nil is false, plists stay objects."
  (if (eq v :json-false) nil v))

(defun hydra-test--write-state ()
  "Write $HYDRA_TEST_STATE."
  (let ((file (getenv "HYDRA_TEST_STATE"))
        (buf (window-buffer (selected-window))))
    (when (and file buffer-file-name (buffer-live-p buf))
      (with-current-buffer buf
        (when hydra--generating
          (setq hydra-test-counts (plist-put hydra-test-counts :generating-seen t)))
        (unless (string-empty-p hydra-inline-status)
          (setq hydra-test-counts (plist-put hydra-test-counts :inline-status-seen t)))
        (let* ((last hydra-last-result)
               (state
                `((attached . ,(if (cl-typep (eglot-current-server) 'hydra-eglot-server) t :json-false))
                  (text . ,(buffer-substring-no-properties (point-min) (point-max)))
                  (point . ,(point))
                  (line . ,(line-number-at-pos))
                  (column . ,(current-column))
                  (point_max . ,(point-max))
                  (generating . ,(if hydra--generating t :json-false))
                  (done . ,(if last t :json-false))
                  (ok . ,(if (eq (plist-get last :ok) t) t :json-false))
                  (reason . ,(or (plist-get last :reason) (plist-get last :error) ""))
                  (message . ,(or (plist-get last :message) ""))
                  (status . ,hydra-status)
                  (inline_status . ,hydra-inline-status)
                  (ghost . ,(if (hydra-inline-ghost-text)
                                (substring-no-properties (hydra-inline-ghost-text))
                              nil))
                  (inline_requests . ,(plist-get hydra-test-counts :inline-requests))
                  (cancels . ,(plist-get hydra-test-counts :cancels))
                  (generating_seen . ,(if (plist-get hydra-test-counts :generating-seen) t :json-false))
                  (inline_status_seen . ,(if (plist-get hydra-test-counts :inline-status-seen) t :json-false))
                  (streamed_line_counts . ,(vconcat hydra-test-line-counts))
                  (major_mode . ,(symbol-name major-mode))
                  (echo . ,(or (current-message) "")))))
          (let ((tmp (concat file ".tmp"))
                (json (json-encode state)))
            (let ((coding-system-for-write 'utf-8))
              (write-region json nil tmp nil 'silent))
            (rename-file tmp file t)))))))

(run-with-timer 0.1 0.05 #'hydra-test--write-state)

;;; tui.el ends here
