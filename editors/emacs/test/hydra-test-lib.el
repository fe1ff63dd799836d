;;; hydra-test-lib.el --- What the batch Emacs tests share -*- lexical-binding: t; -*-

;;; Commentary:

;; Loaded by hydra-test.el and clangd-test.el (editors/emacs/test/run.sh runs both): the
;; ok/not ok reporting, the settings from run.sh's environment, waiting for the server, and
;; the run-and-exit at the end.

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

(defun hydra-test-env (name)
  "The value of environment variable NAME, or an error."
  (let ((v (getenv name)))
    (if (or (null v) (string-empty-p v))
        (error "Environment variable %s is not set (run editors/emacs/test/run.sh)" name)
      v)))

(let ((here (file-name-directory (or load-file-name buffer-file-name))))
  (add-to-list 'load-path (expand-file-name ".." here)))
(setq hydra-server-command (split-string (hydra-test-env "HYDRA_TEST_CMD")))
(setq hydra-model-url (hydra-test-env "HYDRA_MODEL_URL")
      hydra-model (or (getenv "HYDRA_MODEL") "stand-in")
      hydra-max-attempts 8)
(setq eglot-sync-connect t
      eglot-connect-timeout 30
      make-backup-files nil
      create-lockfiles nil
      auto-save-default nil)
(require 'hydra)

(defun hydra-test-wait (pred seconds)
  "Process events until PRED returns non-nil or SECONDS pass; return PRED's value."
  (let ((end (+ (float-time) seconds)) v)
    (while (and (not (setq v (funcall pred))) (< (float-time) end))
      (accept-process-output nil 0.05))
    v))

(defun hydra-test-visit (file)
  "Visit FILE and make sure hydra lsp manages it."
  (find-file file)
  (unless (eglot-current-server)
    (apply #'eglot (eglot--guess-contact)))
  (hydra-test-wait (lambda () (eglot-current-server)) 30))

(defun hydra-test-main (run)
  "Call RUN, shut the servers down cleanly (no orphaned processes) and exit."
  (condition-case err
      (funcall run)
    (error (hydra-test-check nil "the test ran to the end" (error-message-string err))))
  (dolist (s (hash-table-values eglot--servers-by-project))
    (dolist (server s)
      (ignore-errors (eglot-shutdown server))))
  (princ (if (zerop hydra-test-failures) "PASS\n" (format "FAIL (%d)\n" hydra-test-failures)))
  (kill-emacs (if (zerop hydra-test-failures) 0 1)))

(provide 'hydra-test-lib)
;;; hydra-test-lib.el ends here
