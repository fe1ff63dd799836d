;;; readme-snippet.el --- The README's Emacs set-up, for the tests  -*- lexical-binding: t; -*-

;;; Commentary:

;; Loaded by hydra-test.el and tui.el: both set Emacs up with the README's
;; snippet, as a user would.  HYDRA_TEST_CMD and HYDRA_MODEL_URL say what
;; replaces its paths and URL.

;;; Code:

(require 'subr-x)

(defun hydra-test-env (name)
  "The value of environment variable NAME, or an error."
  (let ((v (getenv name)))
    (if (or (null v) (string-empty-p v))
        (error "Environment variable %s is not set (run editors/emacs/test/run.sh)" name)
      v)))

(defconst hydra-test--here (file-name-directory (or load-file-name buffer-file-name))
  "The directory of the tests.")

;; The set-up is the README's Emacs snippet, evaluated as written: only the
;; paths (editors/emacs; "hydra" becomes the full path of bin/hydra, which is
;; not on PATH, as the README allows) and the model's URL are replaced.  So
;; `hydra-server-command' is set after (require 'hydra), as users do.
(defun hydra-test--readme-elisp-block (n)
  "The Nth (1-based) elisp block of the README's Emacs section, as written there."
  (let* ((root (expand-file-name "../../.." (file-name-directory hydra-test--here)))
         (readme (with-temp-buffer
                   (insert-file-contents (expand-file-name "README.md" root))
                   (buffer-string)))
         (start (progn (string-match "^### Emacs" readme) (match-end 0))))
    (dotimes (i n)
      (unless (string-match "^ *```elisp\n" readme start)
        (error "The README's Emacs section has no elisp block %d" (1+ i)))
      (setq start (match-end 0)))
    (substring readme start (string-match "^ *```" readme start))))

(defun hydra-test-readme-snippet ()
  "The README's Emacs set-up snippet, with its path and model URL made real."
  (let* ((here (file-name-directory hydra-test--here))
         (snippet (hydra-test--readme-elisp-block 1)))
    (dolist (r `(("/path/to/hydra/editors/emacs" . ,(expand-file-name ".." here))
                 ("'(\"hydra\" \"lsp\")"
                  . ,(format "'%S" (split-string (hydra-test-env "HYDRA_TEST_CMD"))))
                 ("http://127.0.0.1:8000/v1" . ,(hydra-test-env "HYDRA_MODEL_URL"))))
      (unless (string-search (car r) snippet)
        (error "The README's Emacs snippet no longer has %s" (car r)))
      (setq snippet (string-replace (car r) (cdr r) snippet)))
    snippet))

(defun hydra-test-readme-ts-snippet ()
  "The README's snippet for the tree-sitter modes: the Emacs section's second elisp block."
  (let ((snippet (hydra-test--readme-elisp-block 2)))
    (unless (string-search "c-ts-mode-hook" snippet)
      (error "The README's tree-sitter snippet no longer sets c-ts-mode-hook: %s" snippet))
    snippet))

(defun hydra-test-readme-typescript-snippet ()
  "The README's snippet for TypeScript: the Emacs section's third elisp block."
  (let ((snippet (hydra-test--readme-elisp-block 3)))
    (unless (string-search "typescript-ts-mode-hook" snippet)
      (error "The README's TypeScript snippet no longer sets typescript-ts-mode-hook: %s" snippet))
    snippet))

(defun hydra-test-eval-readme-snippet ()
  "Evaluate the README's snippet (paths and URL made real); return its text."
  (let ((snippet (hydra-test-readme-snippet)))
    (eval (car (read-from-string (concat "(progn\n" snippet "\n)"))) t)
    snippet))

(provide 'readme-snippet)
;;; readme-snippet.el ends here
