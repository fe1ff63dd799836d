package lsp

import "encoding/json"

// This file holds the subset of the LSP 3.18 wire types the server speaks, as plain structs for
// encoding/json. See docs/lsp.md for why they are not go.lsp.dev/protocol's generated types.

// Position is a zero-based line and character; Character counts code units of the negotiated
// position encoding (UTF-16 unless the client offered utf-8).
type Position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// Range is a half-open span between two positions.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// TextDocumentIdentifier names a document.
type TextDocumentIdentifier struct {
	URI string `json:"uri"`
}

// VersionedTextDocumentIdentifier names a document at a version.
type VersionedTextDocumentIdentifier struct {
	URI     string `json:"uri"`
	Version int    `json:"version"`
}

// TextDocumentItem is an opened document.
type TextDocumentItem struct {
	URI        string `json:"uri"`
	LanguageID string `json:"languageId"`
	Version    int    `json:"version"`
	Text       string `json:"text"`
}

// DidOpenTextDocumentParams are textDocument/didOpen's parameters.
type DidOpenTextDocumentParams struct {
	TextDocument TextDocumentItem `json:"textDocument"`
}

// TextDocumentContentChangeEvent is one change: a range replaced by Text, or (Range nil) the
// whole document.
type TextDocumentContentChangeEvent struct {
	Range *Range `json:"range,omitempty"`
	Text  string `json:"text"`
}

// DidChangeTextDocumentParams are textDocument/didChange's parameters.
type DidChangeTextDocumentParams struct {
	TextDocument   VersionedTextDocumentIdentifier  `json:"textDocument"`
	ContentChanges []TextDocumentContentChangeEvent `json:"contentChanges"`
}

// DidCloseTextDocumentParams are textDocument/didClose's parameters.
type DidCloseTextDocumentParams struct {
	TextDocument TextDocumentIdentifier `json:"textDocument"`
}

// TextEdit replaces Range with NewText.
type TextEdit struct {
	Range   Range  `json:"range"`
	NewText string `json:"newText"`
}

// OptionalVersionedTextDocumentIdentifier names a document at a version (null = any).
type OptionalVersionedTextDocumentIdentifier struct {
	URI     string `json:"uri"`
	Version *int   `json:"version"`
}

// TextDocumentEdit is a set of edits to one document at one version.
type TextDocumentEdit struct {
	TextDocument OptionalVersionedTextDocumentIdentifier `json:"textDocument"`
	Edits        []TextEdit                              `json:"edits"`
}

// WorkspaceEdit is either DocumentChanges (versioned) or Changes (by URI, unversioned).
type WorkspaceEdit struct {
	Changes         map[string][]TextEdit `json:"changes,omitempty"`
	DocumentChanges []TextDocumentEdit    `json:"documentChanges,omitempty"`
}

// ApplyWorkspaceEditParams are workspace/applyEdit's parameters. The server never sets Label:
// Neovim prints every label.
type ApplyWorkspaceEditParams struct {
	Label string        `json:"label,omitempty"`
	Edit  WorkspaceEdit `json:"edit"`
}

// ApplyWorkspaceEditResult is the client's answer to workspace/applyEdit.
type ApplyWorkspaceEditResult struct {
	Applied       bool   `json:"applied"`
	FailureReason string `json:"failureReason,omitempty"`
}

// Diagnostic severities.
const (
	SeverityError   = 1
	SeverityWarning = 2
)

// Diagnostic is a problem in a document.
type Diagnostic struct {
	Range    Range  `json:"range"`
	Severity int    `json:"severity,omitempty"`
	Code     string `json:"code,omitempty"`
	Source   string `json:"source,omitempty"`
	Message  string `json:"message"`
	// RelatedInformation holds the compiler's notes, for clients that show them
	// (textDocument.publishDiagnostics.relatedInformation); others get them in Message.
	RelatedInformation []DiagnosticRelatedInformation `json:"relatedInformation,omitempty"`
}

// DiagnosticRelatedInformation is a place and a message related to a diagnostic.
type DiagnosticRelatedInformation struct {
	Location Location `json:"location"`
	Message  string   `json:"message"`
}

// Location is a range in a document.
type Location struct {
	URI   string `json:"uri"`
	Range Range  `json:"range"`
}

// PublishDiagnosticsParams are textDocument/publishDiagnostics's parameters.
type PublishDiagnosticsParams struct {
	URI         string       `json:"uri"`
	Version     *int         `json:"version,omitempty"`
	Diagnostics []Diagnostic `json:"diagnostics"`
}

// Message types of window/showMessage and window/logMessage.
const (
	MessageError   = 1
	MessageWarning = 2
	MessageInfo    = 3
	MessageLog     = 4
)

// ShowMessageParams are window/showMessage's (and window/logMessage's) parameters.
type ShowMessageParams struct {
	Type    int    `json:"type"`
	Message string `json:"message"`
}

// ProgressParams are $/progress's parameters; Token is a string or a number.
type ProgressParams struct {
	Token json.RawMessage `json:"token"`
	Value any             `json:"value"`
}

// WorkDoneProgressCreateParams are window/workDoneProgress/create's parameters.
type WorkDoneProgressCreateParams struct {
	Token json.RawMessage `json:"token"`
}

// WorkDoneProgressCancelParams are window/workDoneProgress/cancel's parameters.
type WorkDoneProgressCancelParams struct {
	Token json.RawMessage `json:"token"`
}

// WorkDoneProgressBegin starts a progress.
type WorkDoneProgressBegin struct {
	Kind        string `json:"kind"` // "begin"
	Title       string `json:"title"`
	Cancellable bool   `json:"cancellable"`
	Message     string `json:"message,omitempty"`
	Percentage  *int   `json:"percentage,omitempty"`
}

// WorkDoneProgressReport reports on a progress.
type WorkDoneProgressReport struct {
	Kind        string `json:"kind"` // "report"
	Cancellable bool   `json:"cancellable"`
	Message     string `json:"message,omitempty"`
	Percentage  *int   `json:"percentage,omitempty"`
}

// WorkDoneProgressEnd ends a progress.
type WorkDoneProgressEnd struct {
	Kind    string `json:"kind"` // "end"
	Message string `json:"message,omitempty"`
}

// CancelParams are $/cancelRequest's parameters; ID is a string or a number.
type CancelParams struct {
	ID json.RawMessage `json:"id"`
}

// CodeActionContext is what the client knows about the place a code action is asked for.
type CodeActionContext struct {
	Diagnostics []Diagnostic `json:"diagnostics"`
	Only        []string     `json:"only,omitempty"`
	// TriggerKind is 1 when the user asked (a menu, Ctrl+.), 2 when the client asked by itself
	// (VS Code's lightbulb), 0 when the client does not say (LSP before 3.17).
	TriggerKind int `json:"triggerKind,omitempty"`
}

// CodeActionParams are textDocument/codeAction's parameters.
type CodeActionParams struct {
	TextDocument TextDocumentIdentifier `json:"textDocument"`
	Range        Range                  `json:"range"`
	Context      CodeActionContext      `json:"context"`
}

// Command is a command the client can run (workspace/executeCommand).
type Command struct {
	Title     string `json:"title"`
	Command   string `json:"command"`
	Arguments []any  `json:"arguments,omitempty"`
}

// CodeAction is a code action offered to the user.
type CodeAction struct {
	Title   string   `json:"title"`
	Kind    string   `json:"kind,omitempty"`
	Command *Command `json:"command,omitempty"`
}

// ExecuteCommandParams are workspace/executeCommand's parameters.
type ExecuteCommandParams struct {
	Command       string            `json:"command"`
	Arguments     []json.RawMessage `json:"arguments,omitempty"`
	WorkDoneToken json.RawMessage   `json:"workDoneToken,omitempty"`
}

// InlineCompletionContext says why inline completion was asked for.
type InlineCompletionContext struct {
	TriggerKind int `json:"triggerKind"` // 1 invoked, 2 automatic
}

// InlineCompletionParams are textDocument/inlineCompletion's parameters (LSP 3.18).
type InlineCompletionParams struct {
	TextDocument  TextDocumentIdentifier  `json:"textDocument"`
	Position      Position                `json:"position"`
	Context       InlineCompletionContext `json:"context"`
	WorkDoneToken json.RawMessage         `json:"workDoneToken,omitempty"`
}

// InlineCompletionItem is one proposed continuation (LSP 3.18).
type InlineCompletionItem struct {
	InsertText string   `json:"insertText"`
	FilterText string   `json:"filterText,omitempty"`
	Range      *Range   `json:"range,omitempty"`
	Command    *Command `json:"command,omitempty"`
}

// InlineCompletionList is textDocument/inlineCompletion's result (LSP 3.18).
type InlineCompletionList struct {
	Items []InlineCompletionItem `json:"items"`
}

// ConfigurationItem asks for one configuration section.
type ConfigurationItem struct {
	ScopeURI string `json:"scopeUri,omitempty"`
	Section  string `json:"section,omitempty"`
}

// ConfigurationParams are workspace/configuration's parameters.
type ConfigurationParams struct {
	Items []ConfigurationItem `json:"items"`
}

// DidChangeConfigurationParams are workspace/didChangeConfiguration's parameters.
type DidChangeConfigurationParams struct {
	Settings json.RawMessage `json:"settings"`
}

// ClientCapabilities is the part of the client's capabilities the server looks at.
type ClientCapabilities struct {
	Workspace struct {
		ApplyEdit     bool `json:"applyEdit"`
		Configuration bool `json:"configuration"`
		WorkspaceEdit struct {
			DocumentChanges bool `json:"documentChanges"`
		} `json:"workspaceEdit"`
	} `json:"workspace"`
	Window struct {
		WorkDoneProgress bool `json:"workDoneProgress"`
	} `json:"window"`
	TextDocument struct {
		InlineCompletion   *struct{} `json:"inlineCompletion"`
		PublishDiagnostics struct {
			RelatedInformation bool `json:"relatedInformation"`
		} `json:"publishDiagnostics"`
	} `json:"textDocument"`
	General struct {
		PositionEncodings []string `json:"positionEncodings"`
	} `json:"general"`
}

// WorkspaceFolder is a folder open in the client.
type WorkspaceFolder struct {
	URI  string `json:"uri"`
	Name string `json:"name"`
}

// InitializeParams are initialize's parameters (the part the server reads).
type InitializeParams struct {
	ProcessID             *int               `json:"processId"`
	RootURI               string             `json:"rootUri,omitempty"`
	Capabilities          ClientCapabilities `json:"capabilities"`
	InitializationOptions json.RawMessage    `json:"initializationOptions,omitempty"`
	WorkspaceFolders      []WorkspaceFolder  `json:"workspaceFolders,omitempty"`
	ClientInfo            *struct {
		Name    string `json:"name"`
		Version string `json:"version,omitempty"`
	} `json:"clientInfo,omitempty"`
}

// TextDocumentSyncOptions says how documents are synchronised.
type TextDocumentSyncOptions struct {
	OpenClose bool `json:"openClose"`
	Change    int  `json:"change"` // 2 = incremental
}

// CodeActionOptions describes the code actions offered.
type CodeActionOptions struct {
	CodeActionKinds []string `json:"codeActionKinds"`
}

// ExecuteCommandOptions lists the commands the server runs.
type ExecuteCommandOptions struct {
	Commands         []string `json:"commands"`
	WorkDoneProgress bool     `json:"workDoneProgress"`
}

// InlineCompletionOptions describes inline completion support.
type InlineCompletionOptions struct {
	WorkDoneProgress bool `json:"workDoneProgress"`
}

// ServerCapabilities is what the server offers.
type ServerCapabilities struct {
	PositionEncoding         string                   `json:"positionEncoding,omitempty"`
	TextDocumentSync         TextDocumentSyncOptions  `json:"textDocumentSync"`
	CodeActionProvider       CodeActionOptions        `json:"codeActionProvider"`
	ExecuteCommandProvider   ExecuteCommandOptions    `json:"executeCommandProvider"`
	InlineCompletionProvider *InlineCompletionOptions `json:"inlineCompletionProvider,omitempty"`
	Workspace                struct {
		WorkspaceFolders struct {
			Supported bool `json:"supported"`
		} `json:"workspaceFolders"`
	} `json:"workspace"`
}

// ServerInfo names the server.
type ServerInfo struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// InitializeResult is initialize's result.
type InitializeResult struct {
	Capabilities ServerCapabilities `json:"capabilities"`
	ServerInfo   ServerInfo         `json:"serverInfo"`
}
