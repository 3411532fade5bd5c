package lsp

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// Commands the server executes (workspace/executeCommand). They live under
// "premortem.server." because vscode-languageclient registers every advertised command
// as a VS Code command, and the extension registers premortem.attachKernel and friends
// itself (with pickers and webviews) that call these.
const (
	CommandAttachKernel = "premortem.server.attachKernel"
	CommandListKernels  = "premortem.server.listKernels"
	CommandRecheck      = "premortem.server.recheck"
	CommandShadowRun    = "premortem.server.shadowRun"
	CommandExplain      = "premortem.server.explain"
)

// serverCommands are the commands advertised in executeCommandProvider.
var serverCommands = []string{CommandAttachKernel, CommandListKernels, CommandRecheck, CommandShadowRun, CommandExplain}

// legacyCommandPrefix is the prefix the commands had before: premortem.attachKernel and
// the others are still executed for clients that send them, but not advertised.
const legacyCommandPrefix = "premortem."

// canonicalCommand maps a legacy id (premortem.attachKernel) to its current one.
func canonicalCommand(id string) string {
	if strings.HasPrefix(id, legacyCommandPrefix) && !strings.HasPrefix(id, "premortem.server.") {
		current := "premortem.server." + strings.TrimPrefix(id, legacyCommandPrefix)
		if slices.Contains(serverCommands, current) {
			return current
		}
	}
	return id
}

// NotebookTypes are the notebook types the server syncs: Jupyter notebooks and VS Code's
// Interactive Window (both run Python cells in a Jupyter kernel). Other notebook types
// (e.g. .NET Interactive) are not Python kernels, so "*" is not used.
var NotebookTypes = []string{"jupyter-notebook", "interactive"}

// initializeParams is the part of InitializeParams the server reads. Capabilities stay raw
// maps so unknown client fields never fail decoding.
type initializeParams struct {
	ProcessID             *int            `json:"processId"`
	InitializationOptions json.RawMessage `json:"initializationOptions"`
	Capabilities          struct {
		Window *struct {
			WorkDoneProgress bool `json:"workDoneProgress"`
		} `json:"window"`
		Workspace *struct {
			WorkspaceEdit *struct {
				DocumentChanges bool `json:"documentChanges"`
			} `json:"workspaceEdit"`
			InlayHint *struct {
				RefreshSupport bool `json:"refreshSupport"`
			} `json:"inlayHint"`
			Configuration bool `json:"configuration"`
		} `json:"workspace"`
	} `json:"capabilities"`
}

// serverCapabilities is ServerCapabilities with the 3.17 members protocol v0.12.0 lacks.
type serverCapabilities struct {
	TextDocumentSync       protocol.TextDocumentSyncOptions `json:"textDocumentSync"`
	NotebookDocumentSync   NotebookDocumentSyncOptions      `json:"notebookDocumentSync"`
	HoverProvider          bool                             `json:"hoverProvider"`
	CodeActionProvider     protocol.CodeActionOptions       `json:"codeActionProvider"`
	InlayHintProvider      bool                             `json:"inlayHintProvider"`
	ExecuteCommandProvider protocol.ExecuteCommandOptions   `json:"executeCommandProvider"`
}

type initializeResult struct {
	Capabilities serverCapabilities `json:"capabilities"`
	ServerInfo   struct {
		Name    string `json:"name"`
		Version string `json:"version,omitempty"`
	} `json:"serverInfo"`
}

func (s *Server) initialize(ctx context.Context, params json.RawMessage) (any, error) {
	var p initializeParams
	if err := decode("initialize", params, &p); err != nil {
		return nil, err
	}
	settings, err := ParseSettings(p.InitializationOptions)
	if err != nil {
		// Keep serving with defaults: a typo in a setting must not cost the user the server.
		s.logf(protocol.MessageTypeWarning, "initializationOptions: %v; using defaults", err)
	}
	s.mu.Lock()
	if s.state != stateNew {
		s.mu.Unlock()
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, "initialize sent twice")
	}
	s.settings = settings
	if w := p.Capabilities.Window; w != nil {
		s.client.workDoneProgress = w.WorkDoneProgress
	}
	if w := p.Capabilities.Workspace; w != nil {
		s.client.documentChanges = w.WorkspaceEdit != nil && w.WorkspaceEdit.DocumentChanges
		s.client.inlayHintRefresh = w.InlayHint != nil && w.InlayHint.RefreshSupport
		s.client.configuration = w.Configuration
	}
	s.client.hasInitOptions = len(p.InitializationOptions) > 0 && string(p.InitializationOptions) != "null"
	s.state = stateInitialized
	s.mu.Unlock()

	var r initializeResult
	r.ServerInfo.Name = "premortem"
	r.ServerInfo.Version = s.opts.Version
	c := &r.Capabilities
	c.TextDocumentSync = protocol.TextDocumentSyncOptions{OpenClose: true, Change: protocol.TextDocumentSyncKindIncremental}
	for _, t := range NotebookTypes {
		c.NotebookDocumentSync.NotebookSelector = append(c.NotebookDocumentSync.NotebookSelector, NotebookSelector{
			Notebook: &NotebookDocumentFilter{NotebookType: t},
			Cells:    []NotebookCellLanguage{{Language: "python"}},
		})
	}
	c.HoverProvider = true
	c.CodeActionProvider = protocol.CodeActionOptions{CodeActionKinds: []protocol.CodeActionKind{protocol.QuickFix}}
	c.InlayHintProvider = true
	c.ExecuteCommandProvider = protocol.ExecuteCommandOptions{Commands: slices.Clone(serverCommands)}
	return r, nil
}

func (s *Server) initialized(ctx context.Context, params json.RawMessage) (any, error) {
	s.mu.Lock()
	pull := s.client.configuration && !s.client.hasInitOptions
	s.mu.Unlock()
	if pull {
		go s.pullConfiguration()
	}
	// Before any notebook opens: no kernel. Per-notebook statuses follow on didOpen.
	s.rt.setStatus(KernelStatus{State: StatusNone, Detail: "no kernel — static checks only"})
	s.tracef("initialized; settings %+v", s.currentSettings())
	return nil, nil
}

// pullConfiguration asks the client for the "premortem" section (workspace/configuration)
// and applies it. It runs off the read goroutine: the answer arrives through it.
func (s *Server) pullConfiguration() {
	ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
	defer cancel()
	var result []json.RawMessage
	params := map[string]any{"items": []any{map[string]any{"section": "premortem"}}}
	if _, err := s.conn.Call(ctx, "workspace/configuration", params, &result); err != nil {
		s.tracef("workspace/configuration: %v", err)
		return
	}
	if len(result) == 0 || string(result[0]) == "null" {
		return
	}
	if _, err := s.applySettings(result[0]); err != nil {
		s.logf(protocol.MessageTypeWarning, "settings: %v", err)
	}
}

func (s *Server) shutdown(ctx context.Context, params json.RawMessage) (any, error) {
	s.mu.Lock()
	s.state = stateShutdown
	docs := make([]*document, 0, len(s.docs))
	for _, d := range s.docs {
		docs = append(docs, d)
	}
	s.mu.Unlock()
	for _, d := range docs {
		d.cancelPass()
	}
	s.rt.close()
	return nil, nil
}

func (s *Server) exitNotification(ctx context.Context, params json.RawMessage) (any, error) {
	s.mu.Lock()
	code := 1
	if s.state == stateShutdown {
		code = 0
	}
	s.mu.Unlock()
	select {
	case s.exit <- code:
	default:
	}
	return nil, nil
}

func (s *Server) cancelRequest(ctx context.Context, params json.RawMessage) (any, error) {
	var p CancelParams
	if err := decode("$/cancelRequest", params, &p); err != nil {
		return nil, err
	}
	var id jsonrpc2.ID
	if err := id.UnmarshalJSON(p.ID); err != nil {
		return nil, invalidParams("$/cancelRequest", err)
	}
	s.mu.Lock()
	cancel := s.running[fmtID(id)]
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	return nil, nil
}

func (s *Server) didChangeConfiguration(ctx context.Context, params json.RawMessage) (any, error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(params, &probe); err != nil {
		return nil, invalidParams("workspace/didChangeConfiguration", err)
	}
	if v, ok := probe["settings"]; len(probe) == 0 || (ok && (len(v) == 0 || string(v) == "null")) {
		// A client that does not push settings signals a change with {"settings": null}:
		// pull them, when it can answer workspace/configuration.
		s.mu.Lock()
		pull := s.client.configuration
		s.mu.Unlock()
		if pull {
			go s.pullConfiguration()
		}
		return nil, nil
	}
	return s.applySettings(params)
}

// applySettings parses and applies settings, re-checking every document.
func (s *Server) applySettings(params json.RawMessage) (any, error) {
	settings, err := ParseSettings(params)
	if err != nil {
		return nil, err // logged; the old settings stay
	}
	s.mu.Lock()
	old := s.settings
	s.settings = settings
	docs := make([]*document, 0, len(s.docs))
	for _, d := range s.docs {
		docs = append(docs, d)
	}
	s.mu.Unlock()
	s.tracef("settings changed: %+v", settings)
	newKernel, oldKernel := settings.Kernel, old.Kernel
	switch {
	case newKernel.ConnectionFile != "" && newKernel.ConnectionFile != oldKernel.ConnectionFile:
		s.rt.attachAllFromSetting()
	case newKernel.ConnectionFile == "" && !newKernel.AutoAttach && (oldKernel.ConnectionFile != "" || oldKernel.AutoAttach):
		// Neither a file nor discovery: the user detached.
		s.rt.detachAll()
	case newKernel.ConnectionFile == "" && newKernel.AutoAttach && (oldKernel.ConnectionFile != "" || !oldKernel.AutoAttach):
		s.rt.attachUnattached()
	}
	s.rt.resendStatuses()
	for _, d := range docs {
		s.schedule(d)
	}
	return nil, nil
}
