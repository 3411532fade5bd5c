package analysis

import (
	"sort"
	"strings"
)

// Side-effect markers. They are deliberately conservative: a shadow run refuses or
// neutralises what is marked, so a false mark costs a skipped shadow run while a missed one
// could write to the user's disk.

// effectCalls maps a dotted callee (as written, with common aliases) to its effect.
var effectCalls = map[string]SideEffectKind{
	"os.remove": EffectFileDelete, "os.unlink": EffectFileDelete, "os.rmdir": EffectFileDelete,
	"os.removedirs": EffectFileDelete, "shutil.rmtree": EffectFileDelete,

	"os.rename": EffectFileMove, "os.renames": EffectFileMove, "os.replace": EffectFileMove,
	"shutil.move": EffectFileMove, "shutil.copy": EffectFileMove, "shutil.copy2": EffectFileMove,
	"shutil.copyfile": EffectFileMove, "shutil.copytree": EffectFileMove, "shutil.copyfileobj": EffectFileMove,

	"os.chdir": EffectOSMutation, "os.makedirs": EffectOSMutation, "os.mkdir": EffectOSMutation,
	"os.chmod": EffectOSMutation, "os.chown": EffectOSMutation, "os.putenv": EffectOSMutation,
	"os.unsetenv": EffectOSMutation, "os.umask": EffectOSMutation, "os.symlink": EffectOSMutation,
	"os.link": EffectOSMutation, "os.environ.update": EffectOSMutation, "os.environ.setdefault": EffectOSMutation,
	"os.environ.pop": EffectOSMutation, "os.environ.clear": EffectOSMutation, "shutil.make_archive": EffectFileWrite,
	"shutil.unpack_archive": EffectFileWrite,

	"subprocess.run": EffectSubprocess, "subprocess.call": EffectSubprocess, "subprocess.check_call": EffectSubprocess,
	"subprocess.check_output": EffectSubprocess, "subprocess.Popen": EffectSubprocess,
	"subprocess.getoutput": EffectSubprocess, "subprocess.getstatusoutput": EffectSubprocess,
	"os.system": EffectSubprocess, "os.popen": EffectSubprocess, "os.fork": EffectSubprocess,
	"os.execv": EffectSubprocess, "os.execvp": EffectSubprocess, "os.execl": EffectSubprocess,
	"os.spawnl": EffectSubprocess, "os.spawnv": EffectSubprocess, "os.kill": EffectSubprocess,
	"pty.spawn": EffectSubprocess, "get_ipython.system": EffectSubprocess,

	"urllib.request.urlopen": EffectNetwork, "urllib.request.urlretrieve": EffectNetwork,
	"urlopen": EffectNetwork, "urlretrieve": EffectNetwork, "request.urlopen": EffectNetwork,
	"request.urlretrieve": EffectNetwork, "http.client.HTTPConnection": EffectNetwork,
	"http.client.HTTPSConnection": EffectNetwork, "socket.socket": EffectNetwork,
	"socket.create_connection": EffectNetwork, "wget.download": EffectNetwork, "gdown.download": EffectNetwork,
	"hf_hub_download": EffectNetwork, "snapshot_download": EffectNetwork, "load_dataset": EffectNetwork,
	"get_file": EffectNetwork, "yf.download": EffectNetwork,

	"torch.save": EffectFileWrite, "np.save": EffectFileWrite, "np.savez": EffectFileWrite,
	"np.savez_compressed": EffectFileWrite, "np.savetxt": EffectFileWrite, "numpy.save": EffectFileWrite,
	"joblib.dump": EffectFileWrite, "pickle.dump": EffectFileWrite, "json.dump": EffectFileWrite,
	"yaml.dump": EffectFileWrite, "dill.dump": EffectFileWrite, "cv2.imwrite": EffectFileWrite,
	"plt.imsave": EffectFileWrite, "imageio.imwrite": EffectFileWrite, "sio.savemat": EffectFileWrite,
	"scipy.io.savemat": EffectFileWrite,

	"time.sleep": EffectLongRun,
}

// networkRoots are modules whose every call may reach the network.
var networkRoots = map[string]bool{
	"requests": true, "httpx": true, "urllib3": true, "aiohttp": true, "ftplib": true, "smtplib": true,
	"paramiko": true, "boto3": true, "kaggle": true, "openai": true, "anthropic": true, "gdown": true,
	"wget": true, "kagglehub": true,
}

// writeMethods write a file when called with a destination, on any receiver.
var writeMethods = map[string]bool{
	"to_csv": true, "to_excel": true, "to_parquet": true, "to_json": true, "to_pickle": true, "to_sql": true,
	"to_hdf": true, "to_feather": true, "to_stata": true, "to_html": true, "to_latex": true, "to_xml": true,
	"to_orc": true, "to_markdown": true, "to_netcdf": true, "to_file": true,
	"savefig": true, "save": true, "save_model": true, "save_weights": true, "save_pretrained": true,
	"write_text": true, "write_bytes": true, "touch": true, "mkdir": true, "write_image": true,
	"write_html": true, "imwrite": true, "imsave": true, "savez": true, "dump_model": true,
}

// textReturners return the serialised text instead of writing when given no destination.
var textReturners = map[string]bool{
	"to_csv": true, "to_json": true, "to_html": true, "to_latex": true, "to_xml": true, "to_markdown": true,
}

// findEffects walks the whole tree, function bodies included: any function may be called.
func findEffects(root *node, c *converter) []SideEffect {
	var out []SideEffect
	add := func(kind SideEffectKind, call string, n *node) {
		out = append(out, SideEffect{Kind: kind, Call: call, Range: c.rng(n)})
	}
	var walk func(n *node)
	walk = func(n *node) {
		switch n.typ {
		case "call":
			callEffects(n, c, add)
		case "assignment", "augmented_assignment":
			// os.environ['X'] = ... changes the kernel process environment.
			for _, t := range assignTargets(n) {
				if t.typ == "subscript" && strings.ReplaceAll(c.src(t.child("value")), " ", "") == "os.environ" {
					add(EffectOSMutation, "os.environ[...] =", t)
				}
			}
		case "for_statement":
			if trainingLoop(n, c) {
				add(EffectLongRun, "for "+c.src(n.child("left"))+" in "+c.src(n.child("right")), n.child("left"))
			}
		case "while_statement":
			if cond := c.src(n.child("condition")); cond == "True" || cond == "1" {
				add(EffectLongRun, "while "+cond, n.child("condition"))
			}
		}
		for _, k := range n.kids {
			walk(k)
		}
	}
	walk(root)
	return out
}

func assignTargets(n *node) []*node {
	var out []*node
	for cur := n; cur != nil && (cur.typ == "assignment" || cur.typ == "augmented_assignment"); cur = cur.child("right") {
		if l := cur.child("left"); l != nil {
			out = append(out, l)
			if l.typ == "pattern_list" || l.typ == "tuple" {
				out = append(out, l.namedKids()...)
			}
		}
	}
	return out
}

// callEffects classifies one call.
func callEffects(n *node, c *converter, add func(SideEffectKind, string, *node)) {
	fn := n.child("function")
	if fn == nil {
		return
	}
	callee, last := calleeText(fn, c)
	root := callee
	if i := strings.IndexAny(callee, ".([ "); i >= 0 {
		root = callee[:i]
	}
	e := c.expr(n)
	// The call's text, for 'cuda' in its arguments: a long call (a method chain) is looked
	// at through its own arguments only, or every call of the chain would scan the chain.
	callText := c.src(n)
	if len(callText) > maxCalleeText {
		callText = c.src(n.child("arguments"))
	}
	switch {
	case callee == "open" || callee == "io.open" || callee == "codecs.open":
		mode := e.Keyword("mode")
		if mode == nil && len(e.Args) > 1 {
			mode = e.Args[1]
		}
		if mode != nil {
			s, isStr := mode.Const.(string)
			if !isStr || strings.ContainsAny(s, "wax+") {
				add(EffectFileWrite, "open(mode="+mode.Text+")", n)
			}
		}
	case effectCalls[callee] != "":
		add(effectCalls[callee], callee, n)
	case networkRoots[root]:
		add(EffectNetwork, callee, n)
	case strings.HasPrefix(callee, "subprocess.") || strings.HasPrefix(callee, "os.exec") || strings.HasPrefix(callee, "os.spawn"):
		add(EffectSubprocess, callee, n)
	case last == "unlink" || last == "rmdir" && strings.Contains(callee, "."):
		add(EffectFileDelete, callee, n)
	case strings.Contains(strings.ToLower(last), "download") || strings.HasPrefix(last, "fetch_") ||
		last == "from_pretrained" || last == "urlopen" || last == "urlretrieve":
		add(EffectNetwork, callee, n)
	case last == "dump" && len(e.Args) >= 2:
		add(EffectFileWrite, callee, n)
	case writeMethods[last] && strings.Contains(callee, "."):
		if textReturners[last] && len(e.Args) == 0 && e.Keyword("path_or_buf") == nil && e.Keyword("buf") == nil {
			break // df.to_csv() returns the text
		}
		add(EffectFileWrite, callee, n)
	}
	// CUDA: .cuda(), torch.cuda.*, .to('cuda'), device='cuda', torch.device('cuda').
	switch {
	case last == "cuda" && strings.Contains(callee, "."):
		add(EffectGPU, callee, n)
	case strings.Contains(callee, ".cuda.") && last != "is_available" && last != "device_count":
		add(EffectGPU, callee, n)
	case (last == "device" || last == "to" || last == "set_device") &&
		(strings.Contains(callText, "'cuda") || strings.Contains(callText, `"cuda`)):
		// torch.device('cuda' if torch.cuda.is_available() else 'cpu') may pick CUDA.
		add(EffectGPU, callee+"(cuda)", n)
	default:
		cudaArg := false
		for _, a := range e.Args {
			if isCudaString(a) && (last == "to" || last == "device" || last == "set_device") {
				cudaArg = true
			}
		}
		for _, k := range e.Keywords {
			if k.Name == "device" && isCudaString(k.Value) {
				cudaArg = true
			}
		}
		if cudaArg {
			add(EffectGPU, callee+"(cuda)", n)
		}
	}
	// Downloads requested by keyword (torchvision datasets).
	if d := e.Keyword("download"); d != nil && d.Const == true {
		add(EffectNetwork, callee+"(download=True)", n)
	}
	// Long training: fit/train with epochs.
	if last == "fit" || last == "fit_generator" || last == "train" {
		for _, name := range []string{"epochs", "num_epochs", "n_epochs", "max_epochs", "nb_epoch"} {
			v := e.Keyword(name)
			if v == nil {
				continue
			}
			if k, ok := v.Const.(int64); !ok || k > 1 {
				add(EffectLongRun, callee+"("+name+"="+v.Text+")", n)
			}
			break
		}
		if last == "train" && strings.Contains(strings.ToLower(callee), "trainer") {
			add(EffectLongRun, callee, n)
		}
	}
}

// maxCalleeText is the longest callee text compacted whole.
const maxCalleeText = 4096

// calleeText returns the callee's text without whitespace ("df.to_csv") and its last dotted
// part ("to_csv"). A callee longer than maxCalleeText (a long method chain) keeps its
// first maxCalleeText bytes: compacting all of it at every call of the chain would cost the
// chain's length squared.
func calleeText(fn *node, c *converter) (callee, last string) {
	src := c.src(fn)
	if len(src) <= maxCalleeText {
		callee = strings.Join(strings.Fields(src), "")
		last = callee
		if i := strings.LastIndexByte(callee, '.'); i >= 0 {
			last = callee[i+1:]
		}
		return callee, last
	}
	callee = strings.Join(strings.Fields(src[:maxCalleeText]), "") + "…"
	if fn.typ == "attribute" {
		last = strings.TrimSpace(c.src(fn.child("attribute")))
		callee += "." + last
	}
	return callee, last
}

func isCudaString(e *Expr) bool {
	if e == nil {
		return false
	}
	s, ok := e.Const.(string)
	return ok && strings.HasPrefix(s, "cuda")
}

// trainingLoop reports whether a for loop looks like training: an epoch loop, or a loop
// calling backward() and an optimizer step.
func trainingLoop(n *node, c *converter) bool {
	target := strings.ToLower(c.src(n.child("left")))
	if strings.Contains(target, "epoch") {
		return true
	}
	body := c.src(n.child("body"))
	return strings.Contains(body, ".backward(") && strings.Contains(body, ".step(")
}

// magicEffects are the side effects of IPython magics and shell lines.
func magicEffects(magics []Magic) []SideEffect {
	var out []SideEffect
	for _, m := range magics {
		var kind SideEffectKind
		call := "%" + m.Name
		switch m.Kind {
		case MagicShell:
			kind, call = EffectSubprocess, "!"+m.Name
		case MagicCell:
			call = "%%" + m.Name
			switch m.Name {
			case "bash", "sh", "script", "perl", "ruby", "python", "python2", "python3", "pypy", "system", "!", "cmd", "powershell":
				kind = EffectSubprocess
			case "writefile", "file":
				kind = EffectFileWrite
			}
		case MagicLine:
			switch m.Name {
			case "pip", "conda", "mamba", "sx", "system", "sc", "run", "bash", "sh":
				kind = EffectSubprocess
			case "cd", "env", "set_env", "pushd", "popd", "bookmark":
				kind = EffectOSMutation
			case "writefile", "save", "logstart":
				kind = EffectFileWrite
			case "rm", "rmdir":
				kind = EffectFileDelete
			case "mv", "cp":
				kind = EffectFileMove
			case "mkdir":
				kind = EffectOSMutation
			}
		}
		if kind != "" {
			out = append(out, SideEffect{Kind: kind, Call: call, Range: m.Range})
		}
	}
	return out
}

// sortEffects orders effects by position so output is stable.
func sortEffects(es []SideEffect) {
	sort.SliceStable(es, func(i, j int) bool { return es[i].Range.Start.Before(es[j].Range.Start) })
}
