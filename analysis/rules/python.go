package rules

import (
	"fmt"
	"sort"
	"strings"

	"github.com/premortem/premortem/analysis"
	"github.com/premortem/premortem/facts"
	"github.com/premortem/premortem/finding"
)

// This file: plain Python. NameError (knowing the kernel namespace), AttributeError on
// objects whose attributes are known, KeyError on dicts with known keys, IndexError on
// constant indices of sequences of known length, calling/indexing/attribute access on None,
// len() of scalars.

// checkNames reports free names that are certainly undefined when the cell runs.
func checkNames(c *checker) {
	if len(c.cf.StarImports) > 0 {
		return
	}
	var tries, conds []finding.Range
	var walk func(stmts []*analysis.Statement)
	walk = func(stmts []*analysis.Statement) {
		for _, s := range stmts {
			switch s.Kind {
			case analysis.StmtTry:
				tries = append(tries, s.Range)
			case analysis.StmtIf, analysis.StmtFor, analysis.StmtWhile:
				for _, b := range s.Body {
					conds = append(conds, b.Range)
				}
			}
			walk(s.Body)
		}
	}
	walk(c.cf.Statements)
	inAny := func(r finding.Range, rs []finding.Range) bool {
		for _, x := range rs {
			if within(r, x) {
				return true
			}
		}
		return false
	}
	// IPython runs a one-line cell `ls`, `pwd`, `cd data` as a magic (automagic); lines that
	// did not parse may be such commands too.
	skipLine := map[int]bool{}
	for _, r := range c.cf.SyntaxErrors {
		for l := r.Start.Line; l <= r.End.Line; l++ {
			skipLine[l] = true
		}
	}
	for _, s := range c.cf.Statements {
		single := len(c.cf.Statements) == 1
		if s.Kind == analysis.StmtExpr && s.Value != nil && s.Value.Kind == analysis.ExprName && single && (automagic[s.Value.Name] || shellAlias[s.Value.Name]) {
			skipLine[s.Range.Start.Line] = true
		}
		if s.Kind == analysis.StmtOther {
			for l := s.Range.Start.Line; l <= s.Range.End.Line; l++ {
				skipLine[l] = true
			}
		}
	}
	done := map[string]bool{}
	for _, u := range c.cf.Uses {
		if inAny(u.Range, tries) || skipLine[u.Range.Start.Line] {
			continue // an except clause may handle the NameError; or not Python at all
		}
		if u.Guarded || builtins[u.Name] || analysis.IsBuiltin(u.Name) || done[u.Name] || strings.HasPrefix(u.Name, "_") {
			// the namespace list leaves out _private names
			continue
		}
		f, reported := c.env.value(u.Name)
		missing := reported && !f.Exists
		if !missing && c.env.Namespace != nil && !c.env.Namespace[u.Name] && !reported {
			missing = true
		}
		if !missing {
			continue
		}
		ev := []string{fmt.Sprintf("%s is not defined in the kernel%s", u.Name, paren(c.env.asOf()))}
		var fixes []finding.Fix
		msg := fmt.Sprintf("name '%s' is not defined: no cell that ran defined it, and this cell reads it before binding it", u.Name)
		if u.InFunction != "" {
			msg = fmt.Sprintf("name '%s' is not defined: %s reads it when this cell calls it", u.Name, u.InFunction)
		}
		if best, ok := suggest(u.Name, namespaceNames(c)); ok {
			msg += fmt.Sprintf("; did you mean '%s'?", best)
			fixes = append(fixes, replaceFix("Use '"+best+"'", u.Range, best, true))
		} else if imp, ok := conventionalImport[u.Name]; ok {
			msg += "; it is usually imported with `" + imp + "`"
			fixes = append(fixes, finding.Fix{Title: "Add `" + imp + "`", Edits: []finding.Edit{{
				Range: finding.Range{}, NewText: imp + "\n"}}})
		}
		sev, conf := finding.SeverityError, 0.97
		if u.InFunction != "" {
			conf = 0.9
		}
		done[u.Name] = true
		if inAny(u.Range, conds) {
			c.cond++
			c.report(u.Range, sev, finding.UndefinedName, "NameError", msg, conf, ev, fixes)
			c.cond--
			continue
		}
		n := len(c.findings)
		c.report(u.Range, sev, finding.UndefinedName, "NameError", msg, conf, ev, fixes)
		if u.InFunction == "" && c.env.Namespace != nil && !automagic[u.Name] && !shellAlias[u.Name] && c.pristine(u.Range.Start) {
			// The kernel's whole namespace lacks the name and nothing before the read can bind it.
			c.certainSince(n)
		}
	}
}

// conventionalImport maps usual aliases to their import line.
var conventionalImport = map[string]string{
	"np": "import numpy as np", "pd": "import pandas as pd", "plt": "import matplotlib.pyplot as plt",
	"sns": "import seaborn as sns", "torch": "import torch", "nn": "import torch.nn as nn",
	"F": "import torch.nn.functional as F", "tf": "import tensorflow as tf", "os": "import os",
	"math": "import math", "re": "import re", "json": "import json", "random": "import random",
	"train_test_split": "from sklearn.model_selection import train_test_split",
}

// namespaceNames lists kernel names plus names the cell binds, for did-you-mean.
func namespaceNames(c *checker) []string {
	var out []string
	for n := range c.env.Namespace {
		out = append(out, n)
	}
	for _, d := range c.cf.Defs {
		out = append(out, d.Name)
	}
	sort.Strings(out)
	return out
}

// checkMissingAttr reports base.name when the attribute certainly does not exist. When
// inspected is true the inspector said so for the kernel object itself. It reports (and
// returns true) at most once per expression.
func checkMissingAttr(c *checker, e *analysis.Expr, base *val, inspected bool) bool {
	if base == nil {
		return false
	}
	typeName := kindLabel(base)
	if base.Dynamic {
		return false // the type provides attributes at run time: cannot tell
	}
	missing := inspected
	if !missing {
		switch {
		case base.AttributesComplete && len(base.Attributes) > 0 && !strings.HasPrefix(e.Name, "_"):
			// the listed names leave out _private ones
			missing = !contains(base.Attributes, e.Name)
		case knownAttrs[attrTable(base)] != nil:
			table := attrTable(base)
			missing = !knownAttrs[table][e.Name] && !newerAttrs[e.Name]
			called := c.calledAttr(e)
			switch {
			case table == "series" && !called:
				missing = false // s.label reads an index label
			case table == "dataframe" && called && base.fromKernel:
				missing = false // only the inspector's own answer counts for kernel frames
			}
			if base.Kind == facts.KindDataFrame {
				// df.col works for columns; unknown columns keep us silent
				if _, isCol := base.column(e.Name); isCol {
					missing = false
				} else if _, gone := base.columnMissing(e.Name); !gone {
					missing = false
				}
			}
			if base.Kind == facts.KindTensor && base.Type != "" && base.Type != "torch.Tensor" {
				missing = false // nn.Parameter and subclasses add attributes
			}
		default:
			return false
		}
	}
	if !missing {
		return false
	}
	if base.Kind == facts.KindDataFrame && !c.calledAttr(e) {
		why, _ := base.columnMissing(e.Name)
		reportMissingColumn(c, e.NameRange, e.Name, e.Name, base, why, "AttributeError", true)
		return true
	}
	msg := fmt.Sprintf("%s has no attribute '%s' ('%s' object has no attribute '%s')", base.name, e.Name, pyTypeName(base), e.Name)
	var fixes []finding.Fix
	cands := base.Attributes
	if t := knownAttrs[attrTable(base)]; t != nil {
		cands = nil
		for a := range t {
			cands = append(cands, a)
		}
		sort.Strings(cands)
	}
	if best, ok := suggest(e.Name, cands); ok {
		msg += fmt.Sprintf("; did you mean '%s'?", best)
		fixes = append(fixes, replaceFix("Use ."+best, e.NameRange, best, true))
	}
	_ = typeName
	c.report(e.NameRange, finding.SeverityError, finding.MissingAttribute, "AttributeError", msg, 0.95, []string{describe(base)}, fixes)
	return true
}

// newerAttrs are attributes later pandas/numpy/torch releases added: a kernel with a newer
// library than the tables were made from must not see them flagged.
var newerAttrs = set("map", "case_when", "list", "struct", "device", "to_device", "mT", "nbytes", "itemsize",
	"module_load", "dim_order", "from_dlpack", "nested_tensor", "is_nested", "to_padded_tensor")

// calledAttr reports whether attribute expression e is the callee of the statement's call.
func (c *checker) calledAttr(e *analysis.Expr) bool {
	for _, call := range c.cf.Calls {
		if call.Expr != nil && call.Expr.Value != nil && call.Expr.Value.Range == e.Range {
			return true
		}
	}
	return false
}

// attrTable picks the generated attribute table for a value's kind.
func attrTable(v *val) string {
	switch v.Kind {
	case facts.KindDataFrame:
		if v.Type == "" || v.Type == "pandas.core.frame.DataFrame" {
			return "dataframe"
		}
	case facts.KindSeries:
		if v.Type == "" || v.Type == "pandas.core.series.Series" {
			return "series"
		}
	case facts.KindNDArray:
		if v.Type == "" || v.Type == "numpy.ndarray" {
			return "ndarray"
		}
	case facts.KindTensor:
		return "tensor"
	case facts.KindNone:
		return "none"
	}
	return ""
}

// pyTypeName is the type name Python prints in AttributeError messages.
func pyTypeName(v *val) string {
	if v.Type != "" {
		if i := strings.LastIndexByte(v.Type, '.'); i >= 0 && v.Kind != facts.KindNDArray {
			return v.Type[i+1:]
		}
		return v.Type
	}
	switch v.Kind {
	case facts.KindNDArray:
		return "numpy.ndarray"
	case facts.KindNone:
		return "NoneType"
	}
	return kindLabel(v)
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// checkAttrOf runs attribute rules of the library families.
func checkAttrOf(c *checker, e *analysis.Expr, base *val) {
	if base == nil {
		return
	}
	switch base.Kind {
	case facts.KindSeries:
		pandasAttrRule(c, e, base)
	case facts.KindEstimator:
		sklearnAttrRule(c, e, base)
	}
}

// noneAttribute reports attribute access on None.
func noneAttribute(c *checker, e *analysis.Expr, base *val) {
	why := ""
	if base.origin != "" {
		why = " (" + base.origin + ")"
	}
	msg := fmt.Sprintf("%s is None%s, so .%s fails: 'NoneType' object has no attribute '%s'", base.name, why, e.Name, e.Name)
	n := len(c.findings)
	c.report(e.NameRange, finding.SeverityError, finding.NoneAttribute, "AttributeError", msg, 0.95, []string{describe(base)}, nil)
	if base.fromKernel && c.asInspected(e.Value) && c.pristine(e.Range.Start) {
		c.certainSince(n)
	}
}

// pythonSubscript checks dict keys and sequence indices.
func pythonSubscript(c *checker, e *analysis.Expr, base, idx *val) *val {
	switch base.Kind {
	case facts.KindDict:
		key, ok := constStr(idx)
		if !ok || !base.KeysComplete || c.keyGuards[key] > 0 {
			return nil
		}
		var keys []string
		for _, k := range base.Keys {
			if s, ok := k.(string); ok {
				if s == key {
					return nil
				}
				keys = append(keys, s)
			} else if fmt.Sprint(k) == key {
				return nil
			}
		}
		msg := fmt.Sprintf("key %s is not in %s (keys: %s)", pyRepr(key), base.name, strings.Join(quoteAllPy(keys, 8), ", "))
		var fixes []finding.Fix
		if best, ok := suggest(key, keys); ok {
			msg += fmt.Sprintf("; did you mean %s?", pyRepr(best))
			fixes = append(fixes, replaceFix("Use key "+pyRepr(best), e.Index.Range, quoteLike(e.Index.Text, best), true))
		}
		n := len(c.findings)
		c.report(e.Index.Range, finding.SeverityError, finding.MissingKey, "KeyError", msg, 0.95, []string{describe(base)}, fixes)
		if exactType(base, "dict") && c.asInspected(e.Value) && c.pristine(e.Range.Start) {
			// A plain dict has no __missing__; its keys were listed whole.
			c.certainSince(n)
		}
	case facts.KindList, facts.KindTuple, facts.KindStr:
		i, ok := constInt(idx)
		if !ok {
			if base.elems != nil {
				return nil
			}
			return nil
		}
		n, known := base.rows()
		if base.Kind == facts.KindStr {
			if s, ok := constStr(base); ok {
				n, known = len([]rune(s)), true
			} else if base.Len != nil {
				n, known = *base.Len, true
			}
		}
		if !known {
			return nil
		}
		if i >= n || i < -n {
			kind := map[string]string{facts.KindList: "list", facts.KindTuple: "tuple", facts.KindStr: "string"}[base.Kind]
			c.report(e.Index.Range, finding.SeverityError, finding.IndexOutOfRange, "IndexError",
				fmt.Sprintf("index %d is out of range: %s has %d elements (%s index out of range)", i, base.name, n, kind),
				0.95, []string{describe(base)}, nil)
			return nil
		}
		if base.elems != nil && len(base.elems) == n {
			if i < 0 {
				i += n
			}
			return base.elems[i]
		}
	}
	return nil
}

func quoteAllPy(ss []string, max int) []string {
	var out []string
	for i, s := range ss {
		if i == max {
			out = append(out, "…")
			break
		}
		out = append(out, pyRepr(s))
	}
	return out
}

// pythonCall handles builtins: len() of scalars, list()/dict() results.
func pythonCall(c *checker, k *callInfo) (*val, bool) {
	if k.method != "" || k.e.Value == nil || k.e.Value.Kind != analysis.ExprName {
		return nil, false
	}
	name := k.e.Value.Name
	if !builtins[name] || !c.fromKernelName(name) {
		if k.fn != nil && k.fn.fn != nil {
			return nil, false
		}
		return nil, false
	}
	switch name {
	case "len":
		x := k.arg(0, "")
		if x == nil {
			return nil, true
		}
		switch x.Kind {
		case facts.KindInt, facts.KindFloat, facts.KindBool, facts.KindNumpyScalar, facts.KindNone:
			t := map[string]string{facts.KindInt: "int", facts.KindFloat: "float", facts.KindBool: "bool", facts.KindNone: "NoneType"}[x.Kind]
			if x.Kind == facts.KindNumpyScalar {
				t = x.Type
			}
			c.report(k.e.Range, finding.SeverityError, finding.LenOfScalar, "TypeError",
				fmt.Sprintf("%s is a single %s, not a collection, so len() fails (object of type '%s' has no len())", x.name, t, t),
				0.95, []string{describe(x)}, nil)
			return nil, true
		}
		if n, ok := x.rows(); ok {
			return constVal(int64(n), k.e.Text), true
		}
		return &val{Value: facts.Value{Kind: facts.KindInt}, name: k.e.Text}, true
	case "float", "int":
		x := k.arg(0, "")
		if x == nil {
			return nil, true
		}
		n, ok := x.rows()
		if x.Kind == facts.KindDataFrame || (x.Kind == facts.KindSeries && ok && n != 1) {
			c.report(k.e.Range, finding.SeverityError, finding.ScalarConversion, "TypeError",
				fmt.Sprintf("%s is a %s of %d values, and %s() takes one number (cannot convert the series to <class '%s'>)", x.name, kindLabel(x), n, name, name),
				0.93, []string{describe(x)}, nil)
			return nil, true
		}
		return &val{Value: facts.Value{Kind: map[string]string{"float": facts.KindFloat, "int": facts.KindInt}[name]}, name: k.e.Text}, true
	case "print", "display", "type", "isinstance", "repr", "str", "id", "hasattr", "getattr", "sorted", "sum", "min", "max", "abs", "round", "range", "enumerate", "zip", "list", "tuple", "set", "dict", "bool", "iter", "next", "map", "filter", "any", "all", "format", "input", "open", "vars", "dir", "help":
		if name == "str" || name == "repr" || name == "format" {
			return &val{Value: facts.Value{Kind: facts.KindStr}, name: k.e.Text}, true
		}
		if name == "range" {
			v := &val{name: k.e.Text}
			v.Kind = facts.KindOther
			lo, hi, ok := 0, 0, false
			switch len(k.args) {
			case 1:
				hi, ok = constInt(k.args[0])
			case 2:
				var ok1 bool
				lo, ok1 = constInt(k.args[0])
				hi, ok = constInt(k.args[1])
				ok = ok && ok1
			}
			if ok {
				n := max(hi-lo, 0)
				v.Shape = []int{n}
			}
			return v, true
		}
		if name == "list" || name == "tuple" {
			v := &val{name: k.e.Text}
			v.Kind = map[string]string{"list": facts.KindList, "tuple": facts.KindTuple}[name]
			if x := k.arg(0, ""); x != nil {
				if n, ok := x.rows(); ok && x.Kind != facts.KindDict {
					v.Len = &n
				}
			}
			return v, true
		}
		return nil, true
	}
	return nil, false
}

// builtins are names Python resolves without the user's namespace.
var builtins = set("abs", "aiter", "all", "anext", "any", "ascii", "bin", "bool", "breakpoint", "bytearray",
	"bytes", "callable", "chr", "classmethod", "compile", "complex", "copyright", "credits", "delattr",
	"dict", "dir", "divmod", "enumerate", "eval", "exec", "exit", "filter", "float", "format",
	"frozenset", "getattr", "globals", "hasattr", "hash", "help", "hex", "id", "input", "int",
	"isinstance", "issubclass", "iter", "len", "license", "list", "locals", "map", "max",
	"memoryview", "min", "next", "object", "oct", "open", "ord", "pow", "print", "property", "quit",
	"range", "repr", "reversed", "round", "set", "setattr", "slice", "sorted", "staticmethod", "str",
	"sum", "super", "tuple", "type", "vars", "zip", "__name__", "__file__", "__doc__", "__builtins__",
	"__import__", "__spec__", "__loader__", "__package__", "__debug__", "NotImplemented", "Ellipsis",
	"True", "False", "None", "display", "get_ipython", "In", "Out", "_", "__", "___", "_i", "_ii",
	"_iii", "_oh", "_dh", "exit", "quit",
	"ArithmeticError", "AssertionError", "AttributeError", "BaseException", "BlockingIOError",
	"BrokenPipeError", "BufferError", "BytesWarning", "ChildProcessError", "ConnectionAbortedError",
	"ConnectionError", "ConnectionRefusedError", "ConnectionResetError", "DeprecationWarning",
	"EOFError", "EnvironmentError", "Exception", "FileExistsError", "FileNotFoundError",
	"FloatingPointError", "FutureWarning", "GeneratorExit", "IOError", "ImportError", "ImportWarning",
	"IndentationError", "IndexError", "InterruptedError", "IsADirectoryError", "KeyError",
	"KeyboardInterrupt", "LookupError", "MemoryError", "ModuleNotFoundError", "NameError",
	"NotADirectoryError", "NotImplementedError", "OSError", "OverflowError", "PendingDeprecationWarning",
	"PermissionError", "ProcessLookupError", "RecursionError", "ReferenceError", "ResourceWarning",
	"RuntimeError", "RuntimeWarning", "StopAsyncIteration", "StopIteration", "SyntaxError",
	"SyntaxWarning", "SystemError", "SystemExit", "TabError", "TimeoutError", "TypeError",
	"UnboundLocalError", "UnicodeDecodeError", "UnicodeEncodeError", "UnicodeError",
	"UnicodeTranslateError", "UnicodeWarning", "UserWarning", "ValueError", "Warning",
	"ZeroDivisionError", "ExceptionGroup", "BaseExceptionGroup", "EncodingWarning")

// set builds a string set.
func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// properties are attributes of common types that hold values, not methods: calling them is
// a TypeError ("'tuple' object is not callable").
var properties = map[string]map[string]string{
	facts.KindDataFrame: {"shape": "tuple", "columns": "Index", "index": "Index", "values": "numpy.ndarray", "dtypes": "Series", "size": "int", "ndim": "int", "T": "DataFrame", "empty": "bool", "loc": "_LocIndexer", "iloc": "_iLocIndexer"},
	facts.KindSeries:    {"shape": "tuple", "index": "Index", "values": "numpy.ndarray", "dtype": "numpy.dtype", "size": "int", "ndim": "int", "empty": "bool", "loc": "_LocIndexer", "iloc": "_iLocIndexer"},
	facts.KindNDArray:   {"shape": "tuple", "size": "int", "ndim": "int", "T": "numpy.ndarray", "dtype": "numpy.dtype"},
	facts.KindTensor:    {"shape": "torch.Size", "T": "Tensor", "dtype": "torch.dtype", "device": "torch.device", "ndim": "int", "grad": "Tensor"},
}

// fixedCall maps a property called by mistake to the method users meant, if any.
var fixedCall = map[string]string{"size": "", "shape": "", "values": "", "columns": ""}

// notCallable reports calls of values that are not callable.
func notCallable(c *checker, k *callInfo) bool {
	callee := k.e.Value
	if callee == nil || callee.Kind != analysis.ExprAttribute || k.recv == nil {
		if k.fn != nil && k.fn.fromKernel && plainData(k.fn.Value) && k.fn.Kind != facts.KindModule {
			c.report(k.e.Range, finding.SeverityError, finding.NotCallable, "TypeError",
				fmt.Sprintf("%s is not callable ('%s' object is not callable)", k.fn.name, pyTypeName(k.fn)),
				0.93, []string{describe(k.fn)}, nil)
			return true
		}
		return false
	}
	typ, ok := properties[k.recv.Kind][callee.Name]
	if !ok {
		return false
	}
	if k.recv.Kind == facts.KindTensor && callee.Name == "grad" {
		return false
	}
	var fixes []finding.Fix
	if len(k.e.Args) == 0 && len(k.e.Keywords) == 0 {
		// df.shape() -> df.shape
		fixes = append(fixes, replaceFix("Drop the call parentheses", k.e.Range, callee.Text, true))
	}
	c.report(k.e.Range, finding.SeverityError, finding.NotCallable, "TypeError",
		fmt.Sprintf("%s is a %s, not a method, so calling it fails ('%s' object is not callable)", callee.Text, typ, typ),
		0.95, []string{describe(k.recv)}, fixes)
	return true
}

// strConcat reports str + number.
func strConcat(c *checker, e *analysis.Expr, a, b *val) bool {
	if e.Name != "+" || a == nil || b == nil {
		return false
	}
	var other *val
	var otherExpr *analysis.Expr
	switch {
	case a.Kind == facts.KindStr && b.Kind != facts.KindStr:
		other, otherExpr = b, e.Args[1]
	case b.Kind == facts.KindStr && a.Kind != facts.KindStr:
		other, otherExpr = a, e.Args[0]
	default:
		return false
	}
	t := map[string]string{facts.KindInt: "int", facts.KindFloat: "float", facts.KindBool: "bool", facts.KindNone: "NoneType", facts.KindList: "list"}[other.Kind]
	if t == "" {
		return false
	}
	msg := fmt.Sprintf("%s is a %s, and str + %s is a TypeError (can only concatenate str (not \"%s\") to str)", otherExpr.Text, t, t, t)
	if a.Kind != facts.KindStr {
		msg = fmt.Sprintf("%s is a %s and %s a str: %s + str is a TypeError", otherExpr.Text, t, e.Args[1].Text, t)
	}
	c.report(e.Range, finding.SeverityError, finding.StrConcat, "TypeError", msg, 0.95, []string{describe(other)},
		[]finding.Fix{replaceFix("Convert with str()", otherExpr.Range, "str("+otherExpr.Text+")", true)})
	return true
}

// automagic are the IPython line magics a bare name runs (automagic is on in kernels; shell
// aliases such as ls are not defined in ipykernel).
var automagic = set("pwd", "cd", "who", "whos", "history", "env", "pip", "conda", "alias", "reset", "time",
	"timeit", "load", "run", "save", "store", "matplotlib", "pylab", "who_ls", "magic", "lsmagic", "dhist",
	"dirs", "popd", "pushd", "bookmark", "precision", "config", "killbgscripts", "logstart", "notebook", "page",
	"pdb", "pinfo", "psearch", "quickref", "rerun", "recall", "tb", "xdel", "xmode", "colors", "autocall", "automagic")

// shellAlias are IPython's shell aliases. Like automagic, a bare alias runs only when it is
// the whole cell (measured with ipykernel 6.17 / IPython 8.5).
var shellAlias = set("ls", "clear", "cat", "cp", "mv", "rm", "rmdir", "mkdir", "less", "more", "man", "ll", "lf",
	"lk", "lx", "ldir")
