;;; hydra.el --- Generate C/C++ and TypeScript with repair: Hydra LSP for eglot  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The Hydra LSP authors

;; Author: The Hydra LSP authors
;; Maintainer: The Hydra LSP authors
;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (eglot "1.9") (jsonrpc "1.0.14"))
;; Keywords: languages, c, typescript, tools, convenience
;; URL: https://github.com/hydra-lsp/hydra

;; This file is not part of GNU Emacs.

;; SPDX-License-Identifier: MIT

;;; Commentary:

;; Hydra LSP generates C, C++ and TypeScript with a language model while a real compiler (Clang,
;; TypeScript's own tsc) checks the generation as it streams, and rolls back to the root cause of an
;; error instead of only the place the compiler reports it.  This package is its Emacs client, on
;; top of eglot:
;;
;; - it registers `hydra lsp' with eglot for `c-mode', `c++-mode', `c-ts-mode' and `c++-ts-mode',
;;   and (unless `hydra-typescript' is nil) for `typescript-mode' (MELPA's, on Emacs 28),
;;   `typescript-ts-mode' and `tsx-ts-mode' (M-x eglot, or `eglot-ensure' in a hook, then starts
;;   it);
;; - eglot's own code actions (M-x eglot-code-actions, the lightbulb) offer "Generate with
;;   repair (Hydra)": this package runs it as M-x hydra-generate does, not as eglot's synchronous
;;   request, which would time out and ask to confirm each streamed edit;
;; - M-x hydra-generate runs "generate with repair" at point (or over the active region); the
;;   server streams its edits into the buffer, and this package applies them without eglot's
;;   confirmation prompt while its own generation runs;
;; - M-x hydra-cancel stops it;
;; - M-x hydra-show-trace opens the picture of the last generation's search (an SVG file the
;;   server draws in the user's cache directory), which the summary offers;
;; - it shows the server's work-done progress in the echo area and the mode line (eglot 1.9 shows
;;   none);
;; - M-x hydra-inline-complete (and `hydra-inline-mode', which asks after a pause in typing) shows
;;   the server's textDocument/inlineCompletion result as ghost text: TAB accepts it, M-f and C-e
;;   accept its next word and line, M-n and M-p show the next and previous completion (the
;;   commands are named as copilot.el's), any other command (typing, moving) dismisses it.  eglot
;;   has no inline completion; this package does it.
;;
;; Set-up, from the repository (Emacs 29+):
;;
;;   (package-vc-install '(hydra :url "https://github.com/hydra-lsp/hydra" :lisp-dir "editors/emacs"))
;;   M-x hydra-install-server RET hydra-VERSION-linux-amd64.tar.gz (a path or URL) RET
;;
;; or from a checkout:
;;
;;   (add-to-list 'load-path "/path/to/hydra/editors/emacs")
;;   (require 'hydra)
;;   (setq hydra-model-url "http://127.0.0.1:8000/v1" hydra-model "qwen2.5-coder")
;;   (add-hook 'c++-mode-hook #'eglot-ensure)
;;
;; Note: the file shares its feature name with the unrelated `hydra' key-binding package
;; (abo-abo/hydra); do not put both on `load-path'.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'jsonrpc)
(require 'eglot)

;; eglot 1.16+ (Emacs 30); declared so that binding it below is dynamic on eglot 1.9 too.
(defvar eglot-confirm-server-edits)

(defconst hydra-version "0.1.0"
  "This package's release: the repository's file VERSION.
Its Version: header says the same; `hydra--check-server-version'
compares the server's version with it.")

(defgroup hydra nil
  "Hydra LSP: generate C/C++ and TypeScript with a language model and a live compiler."
  :group 'tools
  :prefix "hydra-")

(defcustom hydra-server-command '("hydra" "lsp")
  "Command line that starts the Hydra language server.
With the default, the server `hydra-install-server' installed in
`hydra-server-directory' runs when it is there, else `hydra' on PATH."
  :type '(repeat string))

(defcustom hydra-server-directory (locate-user-emacs-file "hydra/")
  "Where `hydra-install-server' puts the server (bin/hydra and its checker)."
  :type 'directory)

(defcustom hydra-model-url nil
  "URL of the OpenAI-compatible model server (ending in /v1).
nil means the server's default."
  :type '(choice (const :tag "Server default" nil) string))

(defcustom hydra-model nil
  "Model name sent to the model server; nil = the server's default."
  :type '(choice (const :tag "Server default" nil) string))

(defcustom hydra-api-key-env nil
  "Name of the environment variable that holds the model server's API key."
  :type '(choice (const :tag "None" nil) string))

(defcustom hydra-policy nil
  "Repair policy (for example \"tokpol\"); nil = the server's default."
  :type '(choice (const :tag "Server default" nil) string))

(defcustom hydra-max-tokens nil
  "Most output tokens one generation may spend; nil = the server's default."
  :type '(choice (const :tag "Server default" nil) integer))

(defcustom hydra-max-attempts nil
  "Most attempts (rollouts) one generation may make; nil = the server's default."
  :type '(choice (const :tag "Server default" nil) integer))

(defcustom hydra-inline-max-attempts nil
  "Most attempts one inline completion may make; nil = the server's default."
  :type '(choice (const :tag "Server default" nil) integer))

(defcustom hydra-check-timeout nil
  "Per-chunk time limit of the Clang checker, in seconds; 0 = no limit.
nil = the server's default (120).  A chunk that takes longer fails
with a timeout error."
  :type '(choice (const :tag "Server default" nil) number))

(defcustom hydra-fim nil
  "Fill-in-the-middle format in which the code after point goes to the model.
nil chooses it from the model's name; \"off\" never sends that code;
\"qwen\", \"deepseek\", \"starcoder\", \"codellama\" or \"codestral\"
force that format."
  :type '(choice (const :tag "From the model's name" nil) (const "off") string))

(defcustom hydra-clang-flags nil
  "Extra flags for the Clang checker, for example (\"-std=c++17\")."
  :type '(repeat string))

(defcustom hydra-clangd t
  "Non-nil: `hydra lsp' runs clangd behind it, so the one server gives both.
eglot runs one server per major mode; with this on, go-to-definition,
completion and clangd's diagnostics keep working beside generation.
Read when the server starts."
  :type 'boolean)

(defcustom hydra-clangd-path nil
  "The clangd binary; nil = clangd-19, then clangd, on the server's PATH."
  :type '(choice (const :tag "Search PATH" nil) string))

(defcustom hydra-typescript-server t
  "Non-nil: `hydra lsp' runs TypeScript's own language server behind it.
For TypeScript buffers, as `hydra-clangd' does clangd for C/C++: hover,
go-to-definition, completion and TypeScript's diagnostics keep working beside
generation.  The server is `hydra-typescript-server-command'; when it cannot
start, a warning says why.  Only the server of TypeScript buffers runs it (the
one of C/C++ buffers runs clangd).  Read when the server starts."
  :type 'boolean)

(defcustom hydra-typescript-server-command nil
  "TypeScript's language server behind `hydra lsp': program and arguments.
nil = TypeScript 7's compiler in its LSP mode (tsc --lsp --stdio, the compiler
Hydra checks with); for example (\"typescript-language-server\" \"--stdio\").
Read when the server starts."
  :type '(choice (const :tag "TypeScript 7's tsc --lsp" nil) (repeat string)))

(defcustom hydra-request-timeout 600
  "Seconds to wait for a generation to end before giving up on it."
  :type 'integer)

(defcustom hydra-inline-idle-delay 0.6
  "Idle seconds after typing before `hydra-inline-mode' asks the server."
  :type 'number)

(defcustom hydra-show-trace-function #'hydra-show-trace-default
  "Function that `hydra-show-trace' calls with the picture's file name (SVG).
`hydra-show-trace-default' shows it in Emacs when the frame can, else hands it
to `hydra-trace-opener'.  `find-file-other-window' always opens it in Emacs
\(`image-mode' in a graphical frame, the SVG's text in a terminal)."
  :type '(choice (function-item hydra-show-trace-default)
                 (function-item find-file-other-window)
                 function))

(defcustom hydra-trace-opener (if (eq system-type 'darwin) "open" "xdg-open")
  "Program that opens a picture of a search outside Emacs.
`hydra-show-trace-default' runs it with the SVG file's name when the frame
cannot show SVG images (a terminal): xdg-open gives it to the desktop's viewer
for SVG, usually a web browser."
  :type 'string)

(defface hydra-ghost-face '((t :inherit shadow))
  "Face of inline completion ghost text.")

(defvar hydra-after-generate-functions nil
  "Abnormal hook run in the buffer when a generation ends.
Each function gets the result plist (:ok :text :attempts :outputTokens
:reason), or nil and the error message as a second argument when the request
failed.")

(defvar hydra-progress-functions nil
  "Abnormal hook run with each progress line shown (a string).")

;;;; Settings

(defun hydra--settings (&optional language)
  "The \"hydra\" configuration section as a plist for JSON.
LANGUAGE is the language of the server's buffers when known (`typescript' or
`c'): a server for one language does not start the other's language server."
  (let (plist)
    (cl-flet ((put (k v) (when v (setq plist (plist-put plist k v)))))
      (put :modelUrl hydra-model-url)
      (put :model hydra-model)
      (put :apiKeyEnv hydra-api-key-env)
      (put :policy hydra-policy)
      (put :maxTokens hydra-max-tokens)
      (put :maxAttempts hydra-max-attempts)
      (put :inlineMaxAttempts hydra-inline-max-attempts)
      (put :checkTimeout hydra-check-timeout)
      (put :fim hydra-fim)
      ;; This package reports a generation's end itself: no window/showMessage for it.
      (put :clientShowsSummary t)
      (when hydra-clang-flags (put :clangFlags (vconcat hydra-clang-flags)))
      (put :clangd (if (and hydra-clangd (not (eq language 'typescript))) t :json-false))
      (put :clangdPath hydra-clangd-path)
      ;; TypeScript's server only for the TypeScript entry's server, clangd only for C/C++'s
      ;; (`hydra--server-language'). Sent either way: eglot 1.9 sends no clientInfo, so the server's default for eglot
      ;; does not apply there.
      (put :typescriptServer (if (and hydra-typescript-server (not (eq language 'c))) t :json-false))
      (when hydra-typescript-server-command
        (put :typescriptServerPath (car hydra-typescript-server-command))
        (put :typescriptServerArgs (vconcat (cdr hydra-typescript-server-command)))))
    (or plist (make-hash-table))))

;;;; The eglot server class

(defclass hydra-eglot-server (eglot-lsp-server) ()
  :documentation "An eglot connection to `hydra lsp'.")

(defconst hydra--typescript-modes '(typescript-mode typescript-ts-mode tsx-ts-mode)
  "The major modes of `hydra--typescript-entry'.")

(defun hydra--server-language (server)
  "The language of SERVER's buffers: `typescript' or `c', by its major modes.
eglot 1.9 keeps one mode (`eglot--major-mode'), later ones a list."
  (let ((modes (cond ((fboundp 'eglot--major-modes) (funcall 'eglot--major-modes server))
                     ((fboundp 'eglot--major-mode) (list (funcall 'eglot--major-mode server))))))
    (if (and modes (cl-every (lambda (m) (memq m hydra--typescript-modes)) modes))
        'typescript
      'c)))

(cl-defmethod eglot-initialization-options ((server hydra-eglot-server))
  "Send the `hydra' settings as initializationOptions.hydra.
eglot starts one server for C/C++ buffers and another for TypeScript ones
\(`hydra--typescript-entry'): each runs only its own language's server
behind it (clangd, or TypeScript's)."
  (list :hydra (hydra--settings (hydra--server-language server))))

(cl-defmethod eglot-handle-request
  ((_server hydra-eglot-server) (_method (eql workspace/configuration)) &key items)
  "Answer section `hydra' from the `hydra-' options, others as eglot does."
  (let ((rest (cl-call-next-method)))
    (apply #'vector
           (cl-loop for item across items
                    for i from 0
                    collect (if (equal (plist-get item :section) "hydra")
                                (hydra--settings)
                              (aref rest i))))))

(defvar hydra--running 0
  "How many of this package's generations are running (any buffer).")

(defun hydra--edit-buffers (edit)
  "The (BUFFER . TEXT-EDITS) pairs of WorkspaceEdit EDIT, for visited files."
  (let (out)
    (cl-flet ((add (uri edits)
                (when-let ((buf (find-buffer-visiting
                                 (hydra--call '(eglot-uri-to-path eglot--uri-to-path) uri))))
                  (push (cons buf (append edits nil)) out))))
      (if-let ((dcs (plist-get edit :documentChanges)))
          (seq-doseq (dc dcs)
            (when-let ((td (plist-get dc :textDocument)))
              (add (plist-get td :uri) (plist-get dc :edits))))
        (cl-loop for (uri edits) on (plist-get edit :changes) by #'cddr
                 do (add (substring (symbol-name uri) 1) edits))))
    out))

(defun hydra--followers (buffers)
  "Where point should go after the edits of BUFFERS (from `hydra--edit-buffers').
A list of (BUFFER WINDOWS-OR-t START LENGTH): in a buffer with a generation
running, the one edit there replaces START..END; point (t) or window points
\(WINDOWS) sitting at END follow the new text's end, START + LENGTH."
  (let (out)
    (pcase-dolist (`(,buf . ,edits) buffers)
      (when (and (= (length edits) 1) (buffer-local-value 'hydra--generating buf))
        (with-current-buffer buf
          (let* ((e (car edits))
                 (region (hydra--call '(eglot-range-region eglot--range-region)
                                      (plist-get e :range)))
                 (end (cdr region))
                 (wins (cl-remove-if-not (lambda (w) (= (window-point w) end))
                                         (get-buffer-window-list buf nil t))))
            (when (or wins (= (point) end))
              (push (list buf (if (= (point) end) (cons t wins) wins)
                          (car region) (length (plist-get e :newText)))
                    out))))))
    out))

(cl-defmethod eglot-handle-request
  ((server hydra-eglot-server) (_method (eql workspace/applyEdit)) &key edit &allow-other-keys)
  "Apply the server's edits without a prompt while a generation of ours runs.
Point (and window points) at the end of the generated text follow it: the user
types after the generated text, never into it.  Then tell the server about the
edits at once: eglot would wait for an idle moment, and the server's next edit
builds on this one."
  ;; eglot 1.16 (Emacs 30) renamed the option to `eglot-confirm-server-edits'
  ;; and kept the old name as an obsolete alias; eglot 1.9 (Emacs 28) has only
  ;; the old one.  Binding both works on either.
  (let ((quiet (> hydra--running 0))
        (follow (ignore-errors (hydra--followers (hydra--edit-buffers edit)))))
    (with-suppressed-warnings ((obsolete eglot-confirm-server-initiated-edits))
      (let ((eglot-confirm-server-initiated-edits
             (if quiet nil eglot-confirm-server-initiated-edits))
            (eglot-confirm-server-edits
             (if quiet nil (bound-and-true-p eglot-confirm-server-edits)))
            ;; eglot says "[eglot] Edit successful!" after each edit: during a
            ;; generation that would hide its progress line in the echo area
            ;; (and fill *Messages*).
            (inhibit-message (or quiet inhibit-message))
            (message-log-max (if quiet nil message-log-max)))
        (prog1 (cl-call-next-method)
          (pcase-dolist (`(,buf ,who ,start ,len) follow)
            (when (buffer-live-p buf)
              (with-current-buffer buf
                (let ((to (min (point-max) (+ start len))))
                  (dolist (w who)
                    (if (eq w t) (goto-char to) (set-window-point w to)))))))
          (dolist (buf (hydra--call '(eglot--managed-buffers) server))
            (when (buffer-live-p buf)
              (with-current-buffer buf (hydra--flush-changes)))))))))

(defvar hydra--recent-summaries nil
  "The summaries of the generations that ended, newest first.")

(cl-defmethod eglot-handle-notification
  ((_server hydra-eglot-server) (_method (eql window/showMessage)) &key _type message)
  "Show the server's message, unless it is a generation's summary.
The summary is reported once, when the generation ends.  A message that comes
while a generation runs may be its summary: it is shown a moment later unless
the generation ended with it meanwhile."
  (cond ((member message hydra--recent-summaries))
        ((> hydra--running 0)
         (let ((next (lambda () (cl-call-next-method))))
           (run-at-time 0.5 nil (lambda ()
                                  (unless (member message hydra--recent-summaries)
                                    (funcall next))))))
        (t (cl-call-next-method))))

(cl-defmethod eglot-handle-request
  ((_server hydra-eglot-server) (_method (eql window/workDoneProgress/create)) &rest _)
  "Accept the server's progress tokens."
  nil)

(defvar-local hydra-status ""
  "Mode-line text of this buffer's generation (progress, then its end).")

(defvar hydra-progress-log nil
  "Progress lines of the most recent generation, newest first.")

(defvar hydra--token-buffers (make-hash-table :test #'equal)
  "Progress token -> buffer of the generation that owns it.")

(defun hydra--progress-line (value)
  "Format a WorkDoneProgress VALUE plist as one line."
  (string-join
   (delq nil (list (plist-get value :title)
                   (plist-get value :message)
                   (when-let ((p (plist-get value :percentage))) (format "(%d%%)" p))
                   (when (equal (plist-get value :kind) "end") "done")))
   " "))

(cl-defmethod eglot-handle-notification
  ((_server hydra-eglot-server) (_method (eql $/progress)) &key token value)
  "Show the server's work-done progress.
In the echo area, the mode line and `hydra-progress-functions'."
  (let ((line (hydra--progress-line value))
        (buf (gethash token hydra--token-buffers)))
    (unless (string-empty-p line)
      (push line hydra-progress-log)
      (when (buffer-live-p buf)
        (with-current-buffer buf
          (setq hydra-status
                (if (string-prefix-p "hydra" line t) line (concat "Hydra: " line)))
          (force-mode-line-update)))
      (let ((message-log-max nil))
        (message "%s" (if (string-prefix-p "hydra" line t) line (concat "Hydra: " line))))
      (run-hook-with-args 'hydra-progress-functions line))))

(defun hydra-installed-server ()
  "The server `hydra-install-server' installed (its bin/hydra), or nil."
  (let ((bin (expand-file-name "bin/hydra" hydra-server-directory)))
    (and (file-executable-p bin) bin)))

(defun hydra--contact (&rest _)
  "The eglot contact of `hydra lsp': `hydra-server-command' when eglot starts.
So the command may be set before or after this package is loaded.  With
the default command, the installed server (`hydra-installed-server') comes
before `hydra' on PATH."
  (cons 'hydra-eglot-server
        (let ((installed (hydra-installed-server)))
          (if (and installed (equal hydra-server-command '("hydra" "lsp")))
              (list installed "lsp")
            hydra-server-command))))

(defun hydra--server-version (bin)
  "The version that BIN --version prints (\"hydra VERSION\").
An error says what it printed otherwise."
  (with-temp-buffer
    (let ((rc (ignore-errors (call-process bin nil t nil "--version"))))
      (if (and (eq rc 0) (string-match "\\`hydra \\([^ \n]+\\)" (buffer-string)))
          (match-string 1 (buffer-string))
        (error "Hydra: %s --version failed (%s): %s" bin rc (string-trim (buffer-string)))))))

(defvar hydra--warned-versions nil
  "The server versions `hydra--check-server-version' warned about (each once).")

(defun hydra--own-version (version)
  "Hydra's own version in serverInfo VERSION: its first word.
The rest names the servers behind it (\"0.1.0 (with clangd 19.1.7)\")."
  (car (split-string (or version "") " ")))

(defun hydra--release (version)
  "VERSION's release: the part before a \"+\" (\"0.1.0+e627e48\" gives \"0.1.0\").
A server built from a commit that is not its release's tag says the commit
after the \"+\" (semantic versioning's build metadata)."
  (car (split-string (hydra--own-version version) "+")))

(defun hydra--version-mismatch (server-version program)
  "The warning for a server PROGRAM of SERVER-VERSION.
nil when that is this package's release."
  (unless (equal (hydra--release server-version) hydra-version)
    (format (concat "this package (hydra.el) is version %s, but the server%s is %s: update "
                    "the package or the server so that both are the same release (the server: "
                    "M-x hydra-install-server with the release archive, or make build; the "
                    "package: package-vc-upgrade or your package manager)")
            hydra-version (if program (format " (%s)" program) "")
            (if (member server-version '(nil "")) "unknown (no serverInfo.version)"
              (hydra--own-version server-version)))))

(defun hydra--check-server-version (server)
  "Log SERVER's version, and warn once when it is not this package's release.
On `eglot-connect-hook': the version is the initialize result's
serverInfo.version, which eglot keeps; the log is *Messages*."
  (when (cl-typep server 'hydra-eglot-server)
    (let* ((info (and (fboundp 'eglot--server-info) (funcall 'eglot--server-info server)))
           (version (plist-get info :version))
           (process (ignore-errors (jsonrpc--process server)))
           (program (car (and (processp process) (process-command process))))
           (warning (hydra--version-mismatch version program)))
      (message "Hydra: server %s %s%s, hydra.el %s" (or (plist-get info :name) "hydra")
               (or version "of unknown version") (if program (format " (%s)" program) "")
               hydra-version)
      (when (and warning (not (member (hydra--own-version version) hydra--warned-versions)))
        (push (hydra--own-version version) hydra--warned-versions)
        (display-warning 'hydra warning :warning)))))

(add-hook 'eglot-connect-hook #'hydra--check-server-version)

;;;###autoload
(defun hydra-install-server (archive)
  "Install the server from the release ARCHIVE into `hydra-server-directory'.
ARCHIVE is the path or http(s) URL of hydra-VERSION-linux-ARCH.tar.gz
\(`make dist' builds it).  It is unpacked beside the directory, and
replaces the server there only once its bin/hydra answers --version.
Servers eglot starts from then on run it (`hydra--contact')."
  (interactive (list (read-string "Hydra release archive (path or URL): ")))
  (let* ((dest (directory-file-name (expand-file-name hydra-server-directory)))
         (tmp (concat dest ".new"))
         (old (concat dest ".old"))
         (file (expand-file-name archive))
         version)
    (when (file-exists-p tmp) (delete-directory tmp t))
    (make-directory tmp t)
    (unwind-protect
        (progn
          (when (string-match-p "\\`https?://" archive)
            (require 'url)
            (setq file (expand-file-name "hydra.tar.gz" tmp))
            (url-copy-file archive file))
          (unless (file-readable-p file)
            (user-error "Hydra: no such archive: %s" file))
          (with-temp-buffer
            (unless (eq 0 (call-process "tar" nil t nil "-xzf" file "-C" tmp "--strip-components=1"))
              (error "Hydra: tar could not unpack %s: %s" file (string-trim (buffer-string)))))
          (when (string-prefix-p (file-name-as-directory tmp) file) (delete-file file))
          (setq version (hydra--server-version (expand-file-name "bin/hydra" tmp)))
          (when (file-exists-p old) (delete-directory old t))
          (when (file-exists-p dest) (rename-file dest old))
          (condition-case err
              (rename-file tmp dest)
            (error (when (file-exists-p old) (rename-file old dest))
                   (signal (car err) (cdr err))))
          (when (file-exists-p old) (delete-directory old t)))
      (when (file-exists-p tmp) (delete-directory tmp t)))
    (message "Hydra: server %s installed in %s" version dest)
    version))

(defconst hydra--typescript-entry
  '(((tsx-ts-mode :language-id "typescriptreact")
     (typescript-ts-mode :language-id "typescript")
     (typescript-mode :language-id "typescript"))
    . hydra--contact)
  "The `eglot-server-programs' entry of `hydra lsp' for TypeScript buffers.
An entry of its own, not C/C++'s: eglot 1.9 sends one language id per server,
the one of the mode that started it.  The ids are eglot's own for these modes.")

(defcustom hydra-typescript t
  "Non-nil: eglot uses `hydra lsp' for TypeScript buffers too.
Their modes are `typescript-mode' (MELPA's, on Emacs 28), `typescript-ts-mode'
and `tsx-ts-mode' (Emacs 29+, with the tree-sitter grammar).  eglot runs one
server per buffer: in those buffers Hydra takes the place of the TypeScript
language server that eglot would start (typescript-language-server), and runs
one behind it instead (`hydra-typescript-server').  Set it to nil (setq,
customize) to have eglot start its own there: it takes effect at once, for the
buffers where eglot starts next."
  :type 'boolean)

(defun hydra--register-typescript (on)
  "With ON non-nil, put `hydra--typescript-entry' first in eglot's programs.
With ON nil, take it out of `eglot-server-programs'."
  (if on
      (add-to-list 'eglot-server-programs hydra--typescript-entry)
    (setq eglot-server-programs (delete hydra--typescript-entry eglot-server-programs))))

;;;###autoload
(defun hydra-eglot-register ()
  "Make eglot use `hydra lsp' for C and C++ buffers (the entry goes first).
And for TypeScript buffers, as `hydra-typescript' says."
  (add-to-list 'eglot-server-programs
               '(((c-mode :language-id "c") (c++-mode :language-id "cpp")
                  (c-ts-mode :language-id "c") (c++-ts-mode :language-id "cpp"))
                 . hydra--contact))
  (hydra--register-typescript hydra-typescript))

(hydra-eglot-register)
(add-variable-watcher 'hydra-typescript
                      (lambda (_symbol value operation _where)
                        (when (eq operation 'set) (hydra--register-typescript value))))

(add-to-list 'mode-line-misc-info '(:eval hydra-status) t)

;;;; Helpers that follow eglot's internal renames

(defun hydra--call (names &rest args)
  "Call the first function of NAMES that is defined, with ARGS."
  (let ((f (cl-find-if #'fboundp names)))
    (unless f (error "Hydra: this eglot has none of %S" names))
    (apply f args)))

(defun hydra--server ()
  "The Hydra server managing this buffer, or signal a user error."
  (let ((server (eglot-current-server)))
    (unless (cl-typep server 'hydra-eglot-server)
      (user-error "Hydra: this buffer is not managed by hydra lsp (M-x eglot starts it)"))
    server))

(defun hydra--uri ()
  "The LSP URI of this buffer's file."
  (plist-get (hydra--call '(eglot--TextDocumentIdentifier)) :uri))

(defun hydra--position (&optional pos)
  "LSP position of POS (default point)."
  (save-excursion (hydra--call '(eglot--pos-to-lsp-position) pos)))

(defun hydra--flush-changes ()
  "Send pending buffer changes to the server now (eglot sends them when idle)."
  (hydra--call '(eglot--signal-textDocument/didChange)))

;;;; Generate and cancel

(defvar hydra--token-counter 0)

(defvar-local hydra-last-result nil
  "The result plist of this buffer's last generation, or (:error MESSAGE).")

(defvar-local hydra--generating nil
  "Non-nil while a generation of this buffer runs.")

(defvar-local hydra--mode-line-process nil
  "The buffer's `mode-line-process' before its generation started.")

(defvar-local hydra--change-group nil
  "The change group of the generation running in this buffer: one undo step.")

(defvar-local hydra--user-edited nil
  "Non-nil when a command changed this buffer while its generation ran.")

(defvar-local hydra--pre-command-tick nil)

(defun hydra--pre-command ()
  "Remember the buffer's modification tick before a command."
  (setq hydra--pre-command-tick (buffer-chars-modified-tick)))

(defun hydra--post-command ()
  "Note when a command of the user changed the buffer during a generation."
  (when (and hydra--generating hydra--pre-command-tick
             (/= hydra--pre-command-tick (buffer-chars-modified-tick)))
    (setq hydra--user-edited t)))

(defun hydra--undo-begin ()
  "Start the generation's undo step."
  (setq hydra--user-edited nil
        hydra--change-group (prepare-change-group))
  (activate-change-group hydra--change-group)
  (add-hook 'pre-command-hook #'hydra--pre-command nil t)
  (add-hook 'post-command-hook #'hydra--post-command nil t))

(defun hydra--undo-end ()
  "End the generation's undo step.
The generation's edits (the accepted text, its rollbacks) become one undo step,
unless the user edited the buffer meanwhile: their own changes stay steps of
their own, and the generation's edits around them too."
  (when hydra--change-group
    (unless hydra--user-edited
      (undo-amalgamate-change-group hydra--change-group))
    (accept-change-group hydra--change-group)
    (setq hydra--change-group nil))
  (remove-hook 'pre-command-hook #'hydra--pre-command t)
  (remove-hook 'post-command-hook #'hydra--post-command t))

(defvar hydra-last-trace nil
  "The file name of the newest picture of a search (any buffer's), or nil.")

(defun hydra--finish (buf token result error-message)
  "End the generation of BUF with progress TOKEN: RESULT or ERROR-MESSAGE."
  (setq hydra--running (max 0 (1- hydra--running)))
  (remhash token hydra--token-buffers)
  (when (buffer-live-p buf)
    (with-current-buffer buf
      (setq hydra--generating nil
            mode-line-process hydra--mode-line-process)
      (hydra--undo-end)
      (setq hydra-last-result (or result (list :error error-message)))
      (setq hydra-status
            (cond (error-message "Hydra: failed")
                  ((eq (plist-get result :ok) t) "Hydra: done")
                  (t (format "Hydra: %s" (or (plist-get result :reason) "stopped")))))
      (force-mode-line-update)
      ;; One summary: the server's own line (it says when the document, with
      ;; the user's edits, does not compile), else one made here; it offers the
      ;; picture of the search when the server drew one.
      (let ((m (plist-get result :message))
            (trace (plist-get result :trace)))
        (when (stringp trace)
          (setq hydra-last-trace trace))
        (when (stringp m)
          (push m hydra--recent-summaries)
          (when (> (length hydra--recent-summaries) 20)
            (setcdr (nthcdr 19 hydra--recent-summaries) nil))
          (setq m (if (string-prefix-p "hydra: " m t) (substring m 7) m)))
        (message "Hydra: %s%s"
                 (cond (error-message (format "generation failed: %s" error-message))
                       ((and (stringp m) (not (string-empty-p m))) m)
                       ((eq (plist-get result :ok) t)
                        (format "done: %s attempt(s), %s output tokens"
                                (plist-get result :attempts) (plist-get result :outputTokens)))
                       (t (format "stopped: %s" (plist-get result :reason))))
                 (if (stringp trace)
                     (substitute-command-keys "; \\[hydra-show-trace] shows the search")
                   "")))
      (run-hook-with-args 'hydra-after-generate-functions result error-message))))

;;;###autoload
(defun hydra-generate (&optional beg end)
  "Generate with repair at point, or over the region from BEG to END.
The server writes the accepted text into the buffer as it goes; the end is
reported in the echo area and `hydra-last-result'."
  (interactive (when (use-region-p) (list (region-beginning) (region-end))))
  (let ((server (hydra--server))
        (arg (list :uri (hydra--uri))))
    (hydra--flush-changes)
    (if (and beg end)
        (setq arg (plist-put arg :range (list :start (hydra--position beg)
                                             :end (hydra--position end))))
      (setq arg (plist-put arg :position (hydra--position))))
    (hydra--start server arg)))

(defun hydra--start (server arg)
  "Start hydra.generate with argument ARG on SERVER for the current buffer.
Asynchronously: the edits stream in while the user goes on working, without
eglot's confirmation, as one undo step.  Return the progress token."
  (let ((buf (current-buffer))
        (token (format "hydra.el-%d" (cl-incf hydra--token-counter))))
    (when hydra--generating
      (user-error "Hydra: a generation is already running here (M-x hydra-cancel stops it)"))
    (hydra-inline-dismiss t)
    (hydra--undo-begin)
    ;; Beside the major mode's name, where an 80-column mode line still shows it.
    (setq hydra--mode-line-process mode-line-process
          mode-line-process ":Hydra⋯")
    (setq hydra--generating t
          hydra-last-result nil
          hydra-progress-log nil
          hydra-status "Hydra: starting")
    (puthash token buf hydra--token-buffers)
    (cl-incf hydra--running)
    (jsonrpc-async-request
     server :workspace/executeCommand
     (list :command "hydra.generate" :arguments (vector arg) :workDoneToken token)
     :success-fn (lambda (result) (hydra--finish buf token result nil))
     :error-fn (lambda (err)
                 (hydra--finish buf token nil
                                (or (plist-get err :message) (format "%S" err))))
     :timeout-fn (lambda () (hydra--finish buf token nil "timed out"))
     :timeout hydra-request-timeout)
    token))

;;;; eglot's own code-action path (M-x eglot-code-actions, its lightbulb and menus)

;; eglot runs a code action's command with a synchronous workspace/executeCommand
;; (`eglot-execute-command' in eglot 1.9, `eglot-execute' since Emacs 30).  For
;; "Generate with repair" that would block Emacs for the whole generation, give
;; up after eglot's request timeout (10 s on eglot 1.9), and leave the streamed
;; edits to eglot's workspace/applyEdit handler, which asks to confirm each
;; one.  So Hydra's command is run the way M-x hydra-generate runs it instead:
;; asynchronously, its edits applied without a prompt, as one undo step.

(defun hydra--generate-command (server arguments)
  "Start hydra.generate on SERVER with the code action's ARGUMENTS.
ARGUMENTS holds one {uri, position|range} object, as the server made it."
  (let* ((arg (and (> (length arguments) 0) (elt arguments 0)))
         (uri (and (listp arg) (plist-get arg :uri)))
         (buf (and (stringp uri)
                   (find-buffer-visiting
                    (hydra--call '(eglot-uri-to-path eglot--uri-to-path) uri)))))
    (unless buf
      (user-error "Hydra: no buffer visits %s" uri))
    (with-current-buffer buf
      (hydra--flush-changes)
      (hydra--start server arg))))

(defun hydra--generate-action (action)
  "The hydra.generate Command that ACTION runs, or nil.
ACTION is an LSP Command, ExecuteCommandParams or CodeAction (without an edit)."
  (let* ((c (plist-get action :command))
         (command (if (stringp c) action (and (null (plist-get action :edit)) c))))
    (and (listp command)
         (equal (plist-get command :command) "hydra.generate")
         command)))

;; eglot 1.9 (Emacs 28): the code action's command goes to `eglot-execute-command'
;; (obsolete since Emacs 30, where eglot no longer calls it).
(with-suppressed-warnings ((obsolete eglot-execute-command))
  (cl-defmethod eglot-execute-command
    ((server hydra-eglot-server) (_command (eql hydra.generate)) arguments)
    "Run hydra.generate with ARGUMENTS as M-x hydra-generate does (see above)."
    (hydra--generate-command server arguments)))

;; Emacs 30's eglot: every code action, command and lightbulb goes to `eglot-execute'.
(when (fboundp 'eglot-execute)
  (cl-defmethod eglot-execute :around ((server hydra-eglot-server) action)
    "Run Hydra's generation as M-x hydra-generate does; other ACTIONs as eglot does."
    (if-let ((command (hydra--generate-action action)))
        (hydra--generate-command server (plist-get command :arguments))
      (cl-call-next-method))))

;;;###autoload
(defun hydra-cancel (&optional all)
  "Cancel the generation running in this buffer.
With prefix argument ALL, cancel every one."
  (interactive "P")
  (let ((server (hydra--server)))
    (jsonrpc-async-request
     server :workspace/executeCommand
     (list :command "hydra.cancel"
           :arguments (if all [] (vector (list :uri (hydra--uri)))))
     :success-fn #'ignore
     :error-fn (lambda (err) (message "Hydra: cancel failed: %s" (plist-get err :message))))))

(defun hydra-show-trace-default (file)
  "Show FILE, a picture of a search (SVG): in Emacs if the frame can, else outside.
In a graphical frame that displays SVG, `find-file-other-window' shows it
\(`image-mode'); otherwise `hydra-trace-opener' gets it (xdg-open: the
desktop's SVG viewer)."
  (if (and (display-images-p) (image-type-available-p 'svg))
      (find-file-other-window file)
    (unless (executable-find hydra-trace-opener)
      (user-error "Hydra: cannot open %s: no %s on PATH (set `hydra-trace-opener')"
                  file hydra-trace-opener))
    ;; Not waited for: the viewer stays open after Emacs exits.
    (call-process hydra-trace-opener nil 0 nil file)))

;;;###autoload
(defun hydra-show-trace (&optional file)
  "Open the picture of the last generation's search, an SVG file.
It is this buffer's last generation's picture, else the newest of any buffer;
FILE names another.  `hydra-show-trace-function' opens it.  The server draws
the pictures in the user's cache directory (hydra/traces, the newest 50 kept):
the search tree over the program's lines, the checker's errors, the rollbacks,
and the model's streaming against the checker's progress."
  (interactive)
  (let ((file (or file (plist-get hydra-last-result :trace) hydra-last-trace)))
    (cond ((not (stringp file))
           (user-error "Hydra: no picture of a search yet: M-x hydra-generate draws one"))
          ((not (file-readable-p file))
           (user-error "Hydra: the picture %s is gone (the server keeps the newest 50)" file)))
    (funcall hydra-show-trace-function file)
    (message "Hydra: opened %s" (abbreviate-file-name file))
    file))

(defun hydra--servers ()
  "The running `hydra lsp' connections."
  (let (out)
    (maphash (lambda (_project servers)
               (dolist (s servers)
                 (when (and (cl-typep s 'hydra-eglot-server) (jsonrpc-running-p s))
                   (push s out))))
             eglot--servers-by-project)
    out))

(defun hydra-send-configuration ()
  "Send the `hydra-' options to the running servers.
As workspace/didChangeConfiguration.  Setting an option does this by itself;
this command is for doing it again."
  (interactive)
  (dolist (server (hydra--servers))
    (jsonrpc-notify server :workspace/didChangeConfiguration
                    (list :settings (list :hydra (hydra--settings))))))

(defun hydra--signal-configuration (orig server)
  "Around `eglot-signal-didChangeConfiguration': ORIG, except for `hydra lsp'.
eglot sends SERVER `eglot-workspace-configuration', which a repository's
.dir-locals.el can set without asking (eglot marks it a safe local variable).
A workspace must not choose the model server, the API key's variable or the
clangd program, so `hydra lsp' is sent the `hydra-' options only, as
`hydra-send-configuration' does."
  (if (cl-typep server 'hydra-eglot-server)
      (jsonrpc-notify server :workspace/didChangeConfiguration
                      (list :settings (list :hydra (hydra--settings))))
    (funcall orig server)))

(advice-add 'eglot-signal-didChangeConfiguration :around #'hydra--signal-configuration)

(defvar hydra--configuration-timer nil)

(defun hydra--setting-changed (_symbol _value operation _where)
  "Variable watcher of the settings: push them once the setting is done.
OPERATION `set' or `makunbound' of a setting schedules one
workspace/didChangeConfiguration for all the settings set in a row."
  (when (and (memq operation '(set makunbound)) (not hydra--configuration-timer))
    (setq hydra--configuration-timer
          (run-at-time 0 nil (lambda ()
                               (setq hydra--configuration-timer nil)
                               (hydra-send-configuration))))))

;; Settings take effect whenever they are set (setq, customize, setopt): the
;; server reads them at start, and a running one is told at once.
(dolist (v '(hydra-model-url hydra-model hydra-api-key-env hydra-policy
             hydra-max-tokens hydra-max-attempts hydra-inline-max-attempts
             hydra-clang-flags hydra-fim))
  (add-variable-watcher v #'hydra--setting-changed))

;;;; Inline completion as ghost text

(defvar-local hydra--ghost nil
  "The ghost text overlay, or nil.
Its properties: `hydra-text' (what TAB inserts), `hydra-start' and
`hydra-end' (the region it replaces).")

(defvar-local hydra--inline-request nil
  "The inline completion request in flight in this buffer: (SERVER ID), or nil.")

(defvar-local hydra-inline-status ""
  "Mode-line text while an inline completion request runs (\" Hydra⋯\").")


(defvar-local hydra--inline-items nil
  "The items of the last inline completion answer (a vector): next and previous.")

(defvar-local hydra--inline-index 0
  "The index in `hydra--inline-items' of the item shown.")

(defvar hydra-inline-preview-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "TAB") #'hydra-inline-accept)
    (define-key map (kbd "<tab>") #'hydra-inline-accept)
    (define-key map (kbd "M-f") #'hydra-inline-accept-by-word)
    (define-key map (kbd "C-e") #'hydra-inline-accept-by-line)
    (define-key map (kbd "M-n") #'hydra-inline-next)
    (define-key map (kbd "M-p") #'hydra-inline-previous)
    (define-key map (kbd "C-g") #'hydra-inline-dismiss)
    map)
  "Keys active while ghost text is shown (the commands are named as copilot.el's).")

(defconst hydra--inline-commands
  '(hydra-inline-accept hydra-inline-accept-by-word hydra-inline-accept-by-line
    hydra-inline-next hydra-inline-previous)
  "Commands that act on the ghost text: it stays, and their edits ask nothing.")

(define-minor-mode hydra-inline-preview-mode
  "Internal: on while inline completion ghost text is shown, for its keys."
  :lighter nil
  :keymap hydra-inline-preview-mode-map
  (if hydra-inline-preview-mode
      (add-hook 'pre-command-hook #'hydra--inline-pre-command nil t)
    (remove-hook 'pre-command-hook #'hydra--inline-pre-command t)))

(defun hydra--inline-pre-command ()
  "Dismiss the ghost text before any command but those acting on it."
  (unless (memq this-command hydra--inline-commands)
    (hydra-inline-dismiss)))

(defun hydra--inline-cancel ()
  "Cancel the inline completion request in flight ($/cancelRequest).
The server stops its search and the model stream; a late answer is ignored."
  (when-let ((req hydra--inline-request))
    (setq hydra--inline-request nil)
    (ignore-errors
      (jsonrpc-notify (car req) :$/cancelRequest (list :id (cadr req)))))
  (unless (string-empty-p hydra-inline-status)
    (setq hydra-inline-status "")
    (force-mode-line-update)))

(defun hydra-inline-dismiss (&optional cancel)
  "Remove the inline completion ghost text.
Interactively, or with CANCEL non-nil, also cancel a request in flight."
  (interactive (list t))
  (when cancel (hydra--inline-cancel))
  (when hydra--ghost
    (delete-overlay hydra--ghost)
    (setq hydra--ghost nil))
  (when hydra-inline-preview-mode
    (hydra-inline-preview-mode -1)))

(defun hydra-inline-accept ()
  "Insert the inline completion shown as ghost text."
  (interactive)
  (when-let ((ov hydra--ghost))
    (let ((text (overlay-get ov 'hydra-text))
          (start (overlay-get ov 'hydra-start))
          (end (overlay-get ov 'hydra-end)))
      (hydra-inline-dismiss)
      (goto-char start)
      (delete-region start end)
      (insert text))))

(defun hydra--inline-part (ghost what)
  "The start of GHOST that accepting by WHAT (`word' or `line') inserts.
A word: blanks and punctuation, then a word.  A line: up to and including
the first line break after the first character."
  (let ((n (if (eq what 'word)
               (progn (string-match "\\`[[:space:]]*[[:punct:]]*[^[:space:][:punct:]]*" ghost)
                      (match-end 0))
             (let ((nl (string-search "\n" ghost 1)))
               (if nl (1+ nl) (length ghost))))))
    (substring ghost 0 (max 1 n))))

(defun hydra--inline-accept-part (what)
  "Insert the next WHAT (`word' or `line') of the ghost text; show the rest."
  (when-let ((ov hydra--ghost))
    (let* ((ghost (overlay-get ov 'hydra-ghost))
           (part (hydra--inline-part ghost what))
           (rest (substring ghost (length part))))
      (hydra-inline-dismiss)
      (insert part)
      (unless (string-empty-p rest)
        (setq hydra--inline-items (vector (list :insertText rest))
              hydra--inline-index 0)
        (hydra--show-ghost (aref hydra--inline-items 0))))))

(defun hydra-inline-accept-by-word ()
  "Insert the next word of the ghost text; the rest stays shown."
  (interactive)
  (hydra--inline-accept-part 'word))

(defun hydra-inline-accept-by-line ()
  "Insert the rest of the ghost text's line; the lines after stay shown."
  (interactive)
  (hydra--inline-accept-part 'line))

(defun hydra--inline-cycle (step)
  "Show the completion STEP items away in the last answer; with none shown, ask."
  (if (not hydra--ghost)
      (hydra-inline-complete)
    (let ((n (length hydra--inline-items)))
      (when (> n 1)
        (setq hydra--inline-index (mod (+ hydra--inline-index step) n))
        (hydra--show-ghost (aref hydra--inline-items hydra--inline-index))))))

(defun hydra-inline-next ()
  "Show the server's next inline completion; with none shown, ask for one."
  (interactive)
  (hydra--inline-cycle 1))

(defun hydra-inline-previous ()
  "Show the server's previous inline completion; with none shown, ask for one."
  (interactive)
  (hydra--inline-cycle -1))

(defun hydra--item-text (item)
  "The text of inline completion ITEM (insertText: a string or a StringValue)."
  (let ((text (plist-get item :insertText)))
    (if (stringp text) text (plist-get text :value))))

(defun hydra--show-ghost (item)
  "Show inline completion ITEM as ghost text at point."
  (hydra-inline-dismiss)
  (let* ((text (hydra--item-text item))
         (range (plist-get item :range))
         (region (if range
                     (hydra--call '(eglot-range-region eglot--range-region) range)
                   (cons (point) (point))))
         (start (car region))
         (end (cdr region))
         (typed (buffer-substring-no-properties start (point)))
         (ghost (if (string-prefix-p typed text) (substring text (length typed)) text)))
    (when (and text (not (string-empty-p ghost)))
      (let ((ov (make-overlay (point) (point) nil t nil))
            (shown (copy-sequence ghost)))
        (add-face-text-property 0 (length shown) 'hydra-ghost-face nil shown)
        ;; The cursor stays before the ghost text.
        (put-text-property 0 1 'cursor t shown)
        (overlay-put ov 'after-string shown)
        (overlay-put ov 'hydra-text text)
        (overlay-put ov 'hydra-ghost ghost)
        (overlay-put ov 'hydra-start start)
        (overlay-put ov 'hydra-end (max end (point)))
        (overlay-put ov 'priority 1000)
        (setq hydra--ghost ov)
        (hydra-inline-preview-mode 1)))))

(defun hydra-inline-ghost-text ()
  "The ghost text shown now, or nil."
  (and hydra--ghost (overlay-get hydra--ghost 'after-string)))

(defun hydra--in-comment-or-string ()
  "Non-nil when point is inside a comment or a string literal."
  (nth 8 (syntax-ppss)))

;;;###autoload
(defun hydra--inline-answered (buf req then)
  "In BUF, end the inline request REQ if it is still current, then call THEN.
An answer to a request that a newer one replaced is dropped."
  (when (buffer-live-p buf)
    (with-current-buffer buf
      (when (equal (cadr hydra--inline-request) (car req))
        (setq hydra--inline-request nil
              hydra-inline-status "")
        (force-mode-line-update)
        (funcall then)))))

(defun hydra-inline-complete (&optional automatic)
  "Ask the server for an inline completion at point and show it as ghost text.
TAB accepts it; any other command dismisses it.  AUTOMATIC non-nil marks a
request made by `hydra-inline-mode' rather than by the user.  Nothing is asked
inside a comment or a string.  While the server works, the mode line shows
\" Hydra⋯\"; a newer request, or any command, cancels it."
  (interactive)
  (if (hydra--in-comment-or-string)
      (unless automatic (message "Hydra: no inline completion in a comment or a string"))
    (let* ((server (hydra--server))
           (buf (current-buffer))
           (pos (point))
           (tick (buffer-chars-modified-tick))
           req)
      (hydra-inline-dismiss t)
      (hydra--flush-changes)
      (setq req
            (jsonrpc-async-request
             server :textDocument/inlineCompletion
             (list :textDocument (list :uri (hydra--uri))
                   :position (hydra--position)
                   :context (list :triggerKind (if automatic 2 1)))
             :success-fn
             (lambda (result)
               (hydra--inline-answered
                buf req
                (lambda ()
                  ;; Show it only if nothing moved since the request.
                  (when (and (= (point) pos) (= (buffer-chars-modified-tick) tick))
                    (let* ((items (if (vectorp result) result (plist-get result :items)))
                           (item (and items (> (length items) 0) (aref items 0))))
                      (setq hydra--inline-items items
                            hydra--inline-index 0)
                      (if item
                          (hydra--show-ghost item)
                        (unless automatic (message "Hydra: no inline completion here"))))))))
             :error-fn
             (lambda (err)
               (hydra--inline-answered
                buf req
                (lambda ()
                  (unless automatic
                    (message "Hydra: inline completion failed: %s"
                             (plist-get err :message))))))
             :timeout-fn #'ignore
             :timeout hydra-request-timeout))
      ;; jsonrpc-async-request returns (ID TIMER).
      (setq req (if (consp req) req (list req)))
      (setq hydra--inline-request (list server (car req))
            hydra-inline-status " Hydra⋯")
      (force-mode-line-update))))

(defvar-local hydra--inline-timer nil)
(defvar-local hydra--inline-tick nil)

(defun hydra--inline-pre-command-tick ()
  "Remember the modification tick before a command (`hydra-inline-mode')."
  (setq hydra--inline-tick (buffer-chars-modified-tick)))

(defun hydra--inline-post-command ()
  "After a command, cancel what is stale; after an edit, ask again once idle.
Any command that changed the buffer counts as typing: a character, RET,
Backspace, TAB indenting, an electric brace."
  (when hydra--inline-timer
    (cancel-timer hydra--inline-timer)
    (setq hydra--inline-timer nil))
  (unless (eq this-command 'hydra-inline-complete)
    (hydra--inline-cancel))
  (when (and hydra--inline-tick
             (/= hydra--inline-tick (buffer-chars-modified-tick))
             (not (memq this-command (append '(undo undo-only undo-redo) hydra--inline-commands)))
             (not hydra--generating)
             (cl-typep (eglot-current-server) 'hydra-eglot-server))
    (let ((buf (current-buffer)))
      (setq hydra--inline-timer
            (run-with-idle-timer
             hydra-inline-idle-delay nil
             (lambda ()
               (when (buffer-live-p buf)
                 (with-current-buffer buf
                   (setq hydra--inline-timer nil)
                   (when (eq buf (window-buffer (selected-window)))
                     (hydra-inline-complete t))))))))))

;;;###autoload
(define-minor-mode hydra-inline-mode
  "Ask `hydra lsp' for inline completions after a pause in typing; TAB accepts.
The mode line's \" Hydra\" reads \" Hydra⋯\" while the server works."
  :lighter (:eval (if (string-empty-p hydra-inline-status) " Hydra" hydra-inline-status))
  (if hydra-inline-mode
      (progn
        (add-hook 'pre-command-hook #'hydra--inline-pre-command-tick nil t)
        (add-hook 'post-command-hook #'hydra--inline-post-command nil t))
    (remove-hook 'pre-command-hook #'hydra--inline-pre-command-tick t)
    (remove-hook 'post-command-hook #'hydra--inline-post-command t)
    (hydra-inline-dismiss t)))

(provide 'hydra)
;;; hydra.el ends here
