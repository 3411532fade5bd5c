package kernelclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/kernelclient/inspector"
)

// inspectorModule is the sys.modules key of the injected inspector.
const inspectorModule = "_premortem_inspector"

// needsInject is what a guarded call returns when the module is missing or of another
// version.
const needsInject = "premortem: inspector missing"

// guarded wraps an inspector call so that it never raises for a missing module (an
// exception in user_expressions would set sys.last_traceback in the user's session).
func guarded(call string) string {
	return "(lambda m: m." + call + " if getattr(m, 'VERSION', None) == " + pyStr(inspector.Version) +
		" else " + pyStr(needsInject) + ")(__import__('sys').modules.get('" + inspectorModule + "'))"
}

// injecting wraps an inspector call so that the module is first (re)installed: the source
// runs in a fresh module, which is put in sys.modules.
func injecting(call string) string {
	return "(lambda m: (exec(compile(" + pyStr(inspector.Source) + ", '<premortem-inspector>', 'exec'), m.__dict__), " +
		"__import__('sys').modules.__setitem__('" + inspectorModule + "', m), m." + call + ")[-1])" +
		"(__import__('types').ModuleType('" + inspectorModule + "'))"
}

// ErrInspector: the inspector call failed inside the kernel (ename/evalue in the message).
var ErrInspector = errors.New("inspector failed in the kernel")

// InspectorError is a Python exception raised by an inspector call.
type InspectorError struct {
	Call   string
	Ename  string
	Evalue string
}

// Error carries the Python exception name and value so the cause shows in logs as-is.
func (e *InspectorError) Error() string {
	return fmt.Sprintf("%s: %v: %s: %s", e.Call, ErrInspector, e.Ename, e.Evalue)
}

// Unwrap lets callers test errors.Is(err, ErrInspector) without knowing the call.
func (e *InspectorError) Unwrap() error { return ErrInspector }

// pyStr renders a Go string as a Python str literal. JSON string syntax is valid Python
// (json.dumps-compatible), with \u escapes for anything unusual.
func pyStr(s string) string {
	b, _ := json.Marshal(s)
	// json.Marshal escapes <, >, & as \u003c...: still valid Python.
	return string(b)
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

func pyList(ss []string) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = pyStr(s)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// unquotePy strips the quotes of a Python str repr ('x' or "x").
func unquotePy(s string) string {
	if len(s) >= 2 && (s[0] == '\'' || s[0] == '"') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// callInspector evaluates one inspector call in a single round trip; when the module is
// missing or of another version (first call, after a restart) it is injected by a second
// round trip that also makes the call.
func (c *Client) callInspector(ctx context.Context, name, call string) (string, error) {
	text, _, err := c.callInspectorCount(ctx, name, call)
	return text, err
}

// callInspectorCount is callInspector that also returns the kernel's execution count (the
// last cell the user ran) from the execute_reply.
func (c *Client) callInspectorCount(ctx context.Context, name, call string) (string, int, error) {
	res, count, err := c.evalSilent(ctx, map[string]string{"r": guarded(call)})
	if err != nil {
		return "", count, fmt.Errorf("%s: %w", name, err)
	}
	r := res["r"]
	if r.Status == "ok" && unquotePy(r.Data["text/plain"]) == needsInject {
		res, count, err = c.evalSilent(ctx, map[string]string{"r": injecting(call)})
		if err != nil {
			return "", count, fmt.Errorf("%s: inject inspector: %w", name, err)
		}
		r = res["r"]
		if r.Status == "ok" {
			c.mu.Lock()
			c.injectedFor = c.info.Session
			c.injections++
			c.mu.Unlock()
		}
	}
	if r.Status != "ok" {
		return "", count, &InspectorError{Call: name, Ename: r.Ename, Evalue: r.Evalue} // names the call itself
	}
	text, ok := r.Data["text/plain"]
	if !ok {
		return "", count, fmt.Errorf("%s: inspector returned no text/plain value", name)
	}
	return text, count, nil
}

// Inspect returns runtime facts for names and attribute chains. One silent execute with
// user_expressions (two the first time, to inject the inspector).
func (c *Client) Inspect(ctx context.Context, req InspectRequest) (*facts.Inspection, error) {
	budget := req.Budget
	if budget <= 0 {
		budget = 50 * time.Millisecond
	}
	names := req.Names
	if names == nil {
		names = []string{}
	}
	call := fmt.Sprintf("inspect(%s, %d, %s, %s)", pyList(names), budget.Milliseconds(), pyBool(!req.NoValues), pyBool(req.Namespace))
	text, count, err := c.callInspectorCount(ctx, "inspect", call)
	if err != nil {
		return nil, err
	}
	var ins facts.Inspection
	if err := json.Unmarshal([]byte(text), &ins); err != nil {
		return nil, fmt.Errorf("inspect: decode inspector JSON: %w (got %.200q)", err, text)
	}
	if ins.Values == nil {
		ins.Values = map[string]facts.Value{}
	}
	// The execute_reply's count is the last cell the user ran: facts are "as of run N".
	ins.ExecutionCount = count
	return &ins, nil
}

// Shadow forks the kernel process and runs code in the child.
func (c *Client) Shadow(ctx context.Context, code string, opts ShadowOptions) (*facts.ShadowResult, error) {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = 3 * time.Second
	}
	tensors := opts.Tensors
	if tensors != facts.TensorsMeta && tensors != facts.TensorsReal {
		tensors = facts.TensorsAuto
	}
	call := fmt.Sprintf("shadow(%s, %s, %s, %d, %s, %s, %d, %s, %s)", pyStr(code), strconv.FormatFloat(timeout.Seconds(), 'f', -1, 64), pyBool(opts.Trace), opts.MaxMemory,
		pyStr(sandboxSetting(opts.Sandbox)), strconv.FormatFloat(opts.FullTimeout.Seconds(), 'f', -1, 64), opts.DevRunCap, pyStr(tensors), pyList(opts.Types))
	return c.shadowCall(ctx, "shadow", call)
}

// sandboxSetting normalises a sandbox setting: anything but the forced fallback is auto.
func sandboxSetting(s string) string {
	if s == SandboxForceFallback {
		return SandboxForceFallback
	}
	return SandboxAuto
}

// SandboxProbe asks the kernel which sandbox its shadow runs get (cached in the kernel).
func (c *Client) SandboxProbe(ctx context.Context, sandbox string) (*facts.SandboxInfo, error) {
	text, err := c.callInspector(ctx, "sandbox_probe", "sandbox_probe("+pyStr(sandboxSetting(sandbox))+")")
	if err != nil {
		return nil, err
	}
	var info facts.SandboxInfo
	if err := json.Unmarshal([]byte(text), &info); err != nil {
		return nil, fmt.Errorf("sandbox_probe: decode inspector JSON: %w (got %.200q)", err, text)
	}
	return &info, nil
}

// ShadowResult collects the outcome of a shadow run.
func (c *Client) ShadowResult(ctx context.Context, token string) (*facts.ShadowResult, error) {
	return c.shadowCall(ctx, "shadow_result", "shadow_result("+pyStr(token)+")")
}

// ShadowCancel kills a running shadow child.
func (c *Client) ShadowCancel(ctx context.Context, token string) error {
	_, err := c.shadowCall(ctx, "shadow_cancel", "shadow_cancel("+pyStr(token)+")")
	return err
}

func (c *Client) shadowCall(ctx context.Context, name, call string) (*facts.ShadowResult, error) {
	text, err := c.callInspector(ctx, name, call)
	if err != nil {
		return nil, err
	}
	var r facts.ShadowResult
	if err := json.Unmarshal([]byte(text), &r); err != nil {
		return nil, fmt.Errorf("%s: decode inspector JSON: %w (got %.200q)", name, err, text)
	}
	return &r, nil
}

// WhoAmI is what the kernel says about itself: the notebook it belongs to (VS Code's
// __vsc_ipynb_file__, JupyterLab's __session__), working directory and pid.
type WhoAmI struct {
	VSCodeNotebook string `json:"vsc_ipynb_file"`
	Session        string `json:"session"`
	Cwd            string `json:"cwd"`
	PID            int    `json:"pid"`
	Version        string `json:"version"`
}

// Notebook returns the notebook path the kernel knows, VS Code's first.
func (w WhoAmI) Notebook() string {
	if w.VSCodeNotebook != "" {
		return w.VSCodeNotebook
	}
	return w.Session
}

// whoamiExpr answers whoami without the inspector module (discovery should not inject
// 100 KB of Python into every kernel on the machine): an object whose repr is the JSON.
const whoamiExpr = `(lambda j, o, g: type('_premortem_whoami', (), {'__repr__': lambda s: j.dumps({` +
	`"vsc_ipynb_file": g.get('__vsc_ipynb_file__'), "session": g.get('__session__'), "cwd": o.getcwd(), "pid": o.getpid(), ` +
	`"version": getattr(__import__('sys').modules.get('` + inspectorModule + `'), 'VERSION', None) or ""}, default=str)})())` +
	`(__import__('json'), __import__('os'), globals())`

// WhoAmI asks the kernel which notebook it serves: one silent execute, no injection.
func (c *Client) WhoAmI(ctx context.Context) (*WhoAmI, error) {
	res, _, err := c.evalSilent(ctx, map[string]string{"w": whoamiExpr})
	if err != nil {
		return nil, fmt.Errorf("whoami: %w", err)
	}
	r := res["w"]
	if r.Status != "ok" {
		return nil, &InspectorError{Call: "whoami", Ename: r.Ename, Evalue: r.Evalue}
	}
	var w WhoAmI
	if err := json.Unmarshal([]byte(r.Data["text/plain"]), &w); err != nil {
		return nil, fmt.Errorf("whoami: decode: %w (got %.200q)", err, r.Data["text/plain"])
	}
	return &w, nil
}
