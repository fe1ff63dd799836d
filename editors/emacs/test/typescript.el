;;; typescript.el --- TypeScript buffers for the terminal test  -*- lexical-binding: t; -*-

;;; Commentary:

;; Loaded by tui.el when HYDRA_TEST_TYPESCRIPT is set (editors/emacs/test/typescript.sh, case
;; tui-typescript), after the README's main snippet: it evaluates the README's TypeScript
;; snippet as written, then makes `.ts' files open in a TypeScript mode that eglot's entry of
;; `hydra lsp' names:
;; - Emacs 29+: the built-in `typescript-ts-mode'.  The test machines have no TypeScript
;;   tree-sitter grammar (Debian packages none), and without it Emacs does not map `.ts' to the
;;   mode itself: this file does, as the README says.  The mode then runs without highlighting.
;; - Emacs 28 has no TypeScript mode; a user installs `typescript-mode' from MELPA.  The test
;;   machines have no MELPA, so this file defines a STAND-IN `typescript-mode' (derived from
;;   `prog-mode', with `js-mode''s syntax table for comments, strings and template literals)
;;   when none is installed.  Only the mode's name is a stand-in: eglot, hydra.el, the server and
;;   TypeScript's compiler are the real ones.

;;; Code:

(require 'js)

(eval (car (read-from-string (concat "(progn\n" (hydra-test-readme-typescript-snippet) "\n)"))) t)

(cond
 ((fboundp 'typescript-ts-mode)
  (add-to-list 'auto-mode-alist '("\\.ts\\'" . typescript-ts-mode)))
 ((not (fboundp 'typescript-mode))
  (define-derived-mode typescript-mode prog-mode "TypeScript"
    "STAND-IN for MELPA's typescript-mode (editors/emacs/test/typescript.el)."
    :syntax-table js-mode-syntax-table
    (setq-local comment-start "// ")
    (setq-local comment-end ""))
  (add-to-list 'auto-mode-alist '("\\.ts\\'" . typescript-mode))))

;;; typescript.el ends here
