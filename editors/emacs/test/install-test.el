;;; install-test.el --- Installing hydra.el with package-vc, its server with hydra-install-server -*- lexical-binding: t; -*-

;;; Commentary:

;; emacs --batch -l editors/emacs/test/install-test.el   (Emacs 29+: package-vc)
;;
;; As a user without a checkout installs it, in an Emacs whose `user-emacs-directory' and
;; `package-user-dir' are empty temporary directories, with no package archives:
;; `package-vc-install' from a local git clone laid out as the repository (the working tree's
;; editors/emacs/hydra.el, :lisp-dir "editors/emacs"), then M-x hydra-install-server with the
;; release archive HYDRA_TEST_ARCHIVE names (`make dist'), then a generation in sum.cpp through
;; eglot with the installed server.  Environment: as hydra-test.el's, and HYDRA_TEST_ARCHIVE.
;; editors/emacs/test/run.sh install runs it.

;;; Code:

(defvar hydra-test-no-readme t)
(load (expand-file-name "hydra-test-lib" (file-name-directory (or load-file-name buffer-file-name))) nil t)
(require 'package)
(require 'package-vc)

(defconst hydra-test--repo
  (expand-file-name "../../.." (file-name-directory (or load-file-name buffer-file-name)))
  "The repository this test runs in.")

(defun hydra-test--git (dir &rest args)
  "Run git ARGS in DIR; an error with its output when it fails."
  (let ((default-directory (file-name-as-directory dir)))
    (with-temp-buffer
      (unless (eq 0 (apply #'call-process "git" nil t nil args))
        (error "git %s: %s" (string-join args " ") (buffer-string))))))

(defun hydra-test--clone ()
  "A git repository laid out as this one, holding the working tree's hydra.el."
  (let ((clone (make-temp-file "hydra-emacs-clone-" t)))
    (make-directory (expand-file-name "editors/emacs" clone) t)
    (copy-file (expand-file-name "editors/emacs/hydra.el" hydra-test--repo)
               (expand-file-name "editors/emacs/hydra.el" clone))
    (copy-file (expand-file-name "LICENSE" hydra-test--repo) (expand-file-name "LICENSE" clone))
    (hydra-test--git clone "init" "-q")
    (hydra-test--git clone "add" ".")
    (hydra-test--git clone "-c" "user.name=hydra test" "-c" "user.email=test@invalid"
                     "commit" "-q" "-m" "hydra.el")
    clone))

(defun hydra-test-run ()
  "Run the checks."
  (let* ((home (file-name-as-directory (make-temp-file "hydra-emacs-home-" t)))
         (dir (file-name-as-directory (hydra-test-env "HYDRA_TEST_DIR")))
         (expected (with-temp-buffer
                     (insert-file-contents-literally (hydra-test-env "HYDRA_TEST_EXPECTED"))
                     (buffer-string)))
         (clone (hydra-test--clone)))
    (setq user-emacs-directory home
          package-user-dir (expand-file-name "elpa" home)
          package-archives nil)
    (package-initialize)
    (hydra-test-check (not (featurep 'hydra)) "hydra.el is not loaded before it is installed")
    (package-vc-install `(hydra :url ,clone :lisp-dir "editors/emacs" :vc-backend Git))
    (hydra-test-check (package-installed-p 'hydra) "package-vc-install installs the package")
    (require 'hydra)
    (let ((from (symbol-file 'hydra-install-server)))
      (hydra-test-check (and from (string-prefix-p (expand-file-name package-user-dir) from))
                        "hydra.el is loaded from the installed package" from))
    (hydra-test-check (null (hydra-installed-server)) "no server is installed yet")
    (let ((version (hydra-install-server (hydra-test-env "HYDRA_TEST_ARCHIVE")))
          (want (expand-file-name "hydra/bin/hydra" home)))
      (hydra-test-check (equal (hydra-installed-server) want)
                        "hydra-install-server unpacks the archive into user-emacs-directory"
                        (hydra-installed-server))
      (hydra-test-check (and (stringp version) (not (string-empty-p version)))
                        "the installed server answers --version" version)
      (setq hydra-model-url (hydra-test-env "HYDRA_MODEL_URL")
            hydra-model (or (getenv "HYDRA_MODEL") "stand-in")
            hydra-max-attempts 8)
      (add-hook 'c++-mode-hook #'eglot-ensure)
      (hydra-test-visit (concat dir "sum.cpp"))
      (let ((server (eglot-current-server)))
        (hydra-test-check (cl-typep server 'hydra-eglot-server) "eglot manages the buffer with hydra lsp")
        (hydra-test-check (and server (equal (car (process-command (jsonrpc--process server))) want))
                          "eglot runs the installed server"
                          (and server (process-command (jsonrpc--process server))))))
    (goto-char (point-max))
    (forward-line -1)
    (hydra-generate)
    (hydra-test-check (hydra-test-wait (lambda () hydra-last-result) 120) "the generation ends")
    (hydra-test-check (eq (plist-get hydra-last-result :ok) t) "the result says ok" hydra-last-result)
    (let ((text (buffer-substring-no-properties (point-min) (point-max))))
      (hydra-test-check (equal text expected) "the buffer equals the expected program"
                        (format "\n--- got\n%s--- want\n%s" text expected)))
    (set-buffer-modified-p nil)))

(hydra-test-main #'hydra-test-run)

;;; install-test.el ends here
