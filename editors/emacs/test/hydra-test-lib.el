;;; hydra-test-lib.el --- What the batch Emacs tests share -*- lexical-binding: t; -*-

;;; Commentary:

;; Loaded by hydra-test.el and clangd-test.el (editors/emacs/test/run.sh runs both): the
;; ok/not ok reporting, the set-up (the README's snippet, readme-snippet.el), waiting for the
;; server, and the run-and-exit at the end.

;;; Code:

(require 'cl-lib)
(require 'subr-x)

(defvar hydra-test-failures 0)

(defun hydra-test-check (ok what &optional detail)
  "Report check WHAT: OK non-nil passes; DETAIL explains a failure."
  (if ok
      (princ (format "ok - %s\n" what))
    (cl-incf hydra-test-failures)
    (princ (format "not ok - %s%s\n" what (if detail (format ": %s" detail) "")))))

(setq eglot-sync-connect t
      eglot-connect-timeout 30
      make-backup-files nil
      create-lockfiles nil
      auto-save-default nil)
(defvar hydra-test-no-readme nil
  "Non-nil (install-test.el): set Emacs up otherwise than with the README's snippet.")

;; The set-up is the README's snippet as written (readme-snippet.el), as a user has it.
(load (expand-file-name "readme-snippet" (file-name-directory (or load-file-name buffer-file-name)))
      nil t)
(unless hydra-test-no-readme
  (princ (format "the README's snippet, as evaluated:\n%s" (hydra-test-eval-readme-snippet)))
  ;; Settings set after the server started reach it too (a watcher pushes them).
  (setq hydra-max-attempts 8))

(defun hydra-test-wait (pred seconds)
  "Process events until PRED returns non-nil or SECONDS pass; return PRED's value."
  (let ((end (+ (float-time) seconds)) v)
    (while (and (not (setq v (funcall pred))) (< (float-time) end))
      (accept-process-output nil 0.05))
    v))

(defun hydra-test-visit (file)
  "Visit FILE as the user does: `find-file', then the command loop's end.
The README's `eglot-ensure' in `c++-mode-hook' connects in `post-command-hook'."
  (find-file file)
  (run-hooks 'post-command-hook)
  (hydra-test-wait (lambda () (eglot-current-server)) 30))

(defun hydra-test-main (run)
  "Call RUN, shut the servers down cleanly (no orphaned processes) and exit."
  (condition-case err
      (funcall run)
    (error (hydra-test-check nil "the test ran to the end" (error-message-string err))))
  (dolist (s (and (boundp 'eglot--servers-by-project) (hash-table-values eglot--servers-by-project)))
    (dolist (server s)
      (ignore-errors (eglot-shutdown server))))
  (princ (if (zerop hydra-test-failures) "PASS\n" (format "FAIL (%d)\n" hydra-test-failures)))
  (kill-emacs (if (zerop hydra-test-failures) 0 1)))

(provide 'hydra-test-lib)
;;; hydra-test-lib.el ends here
