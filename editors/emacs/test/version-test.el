;;; version-test.el --- hydra.el against servers of its own release and of another -*- lexical-binding: t; -*-

;;; Commentary:

;; emacs --batch -l editors/emacs/test/version-test.el   (editors/emacs/test/run.sh version)
;;
;; Set up by the README's snippet (hydra-test-lib.el), with HYDRA_TEST_CMD's server, whose
;; --version printed HYDRA_TEST_SERVER_VERSION; HYDRA_TEST_MISMATCH=1 when that server was built
;; with another release's version.  It checks that *Messages* names the server's version and
;; hydra.el's when eglot connects, and that hydra.el warns (in *Warnings*), naming both, exactly
;; when the releases differ, and only once, also when a second buffer joins the server.

;;; Code:

(load (expand-file-name "hydra-test-lib" (file-name-directory (or load-file-name buffer-file-name))) nil t)

(defun hydra-test-version-warnings ()
  "The text of the hydra version warnings in *Warnings*, one string each."
  (with-current-buffer (get-buffer-create "*Warnings*")
    (let ((text (buffer-substring-no-properties (point-min) (point-max))) (found nil) (start 0))
      (while (string-match "update the package or the server" text start)
        (push (match-string 0 text) found)
        (setq start (match-end 0)))
      found)))

(defun hydra-test-version-run ()
  "Run the checks."
  (let* ((dir (file-name-as-directory (hydra-test-env "HYDRA_TEST_DIR")))
         (server-version (hydra-test-env "HYDRA_TEST_SERVER_VERSION"))
         (mismatch (equal (getenv "HYDRA_TEST_MISMATCH") "1")))
    (hydra-test-visit (concat dir "sum.cpp"))
    (hydra-test-check (cl-typep (eglot-current-server) 'hydra-eglot-server)
                      "eglot manages the buffer with hydra lsp" (eglot-current-server))
    (let ((log (with-current-buffer "*Messages*" (buffer-string))))
      (hydra-test-check (string-match-p (regexp-quote (format "Hydra: server hydra %s" server-version)) log)
                        (format "*Messages* names the server's version (%s)" server-version) log)
      (hydra-test-check (string-match-p (regexp-quote (format "hydra.el %s" hydra-version)) log)
                        (format "*Messages* names hydra.el's version (%s)" hydra-version) log))
    ;; A second buffer of the project joins the same server: no second warning.
    (hydra-test-visit (concat dir "count.cpp"))
    (let ((warnings (hydra-test-version-warnings))
          (text (with-current-buffer (get-buffer-create "*Warnings*") (buffer-string))))
      (if mismatch
          (progn
            (hydra-test-check (= (length warnings) 1) "a server of another release: hydra.el warns once" text)
            (hydra-test-check (and (string-match-p (regexp-quote hydra-version) text)
                                   (string-match-p (regexp-quote server-version) text))
                              (format "the warning names hydra.el's version (%s) and the server's (%s)"
                                      hydra-version server-version)
                              text))
        (hydra-test-check (null warnings) "a server of hydra.el's release: no version warning" text)))))

(hydra-test-main #'hydra-test-version-run)

;;; version-test.el ends here
