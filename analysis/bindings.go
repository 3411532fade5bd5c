package analysis

// Names a block binds, collected without walking it: what Python decides at compile
// time is local to a function.

// collectBindings reports every name bound by the statements under n in n's own scope
// (not inside nested functions, classes, lambdas or comprehension targets), and calls decl
// with each global/nonlocal statement.
func collectBindings(n *node, text string, add func(string), decl func(*node)) {
	if n == nil {
		return
	}
	switch n.typ {
	case "function_definition", "class_definition":
		if nm := n.child("name"); nm != nil {
			add(text[nm.start:nm.end])
		}
		return
	case "lambda":
		return
	case "assignment", "augmented_assignment":
		if n.typ == "assignment" && n.child("type") != nil && n.child("right") == nil {
			return
		}
		targetNames(n.child("left"), text, add)
		collectBindings(n.child("right"), text, add, decl)
		return
	case "for_statement":
		targetNames(n.child("left"), text, add)
	case "with_item":
		if v := n.child("value"); v != nil && v.typ == "as_pattern" {
			if a := v.child("alias"); a != nil {
				targetNames(a.firstNamed(), text, add)
			}
		}
	case "except_clause":
		for _, p := range n.kids {
			if p.typ == "as_pattern" {
				if a := p.child("alias"); a != nil {
					targetNames(a.firstNamed(), text, add)
				}
			}
		}
	case "import_statement", "import_from_statement":
		for _, k := range n.kids {
			switch {
			case k.field != "name":
			case k.typ == "dotted_name":
				if first := k.firstNamed(); first != nil {
					add(text[first.start:first.end])
				}
			case k.typ == "aliased_import":
				if a := k.child("alias"); a != nil {
					add(text[a.start:a.end])
				}
			}
		}
		return
	case "delete_statement":
		if t := n.firstNamed(); t != nil {
			targetNames(t, text, add)
		}
		return
	case "named_expression":
		if nm := n.child("name"); nm != nil {
			add(text[nm.start:nm.end])
		}
	case "for_in_clause":
		// Comprehension targets are local to the comprehension.
		for _, r := range n.children("right") {
			collectBindings(r, text, add, decl)
		}
		return
	case "global_statement", "nonlocal_statement":
		if decl != nil {
			decl(n)
		}
		return
	}
	for _, k := range n.kids {
		collectBindings(k, text, add, decl)
	}
}

// targetNames reports the names an assignment target binds.
func targetNames(t *node, text string, add func(string)) {
	if t == nil {
		return
	}
	switch t.typ {
	case "identifier":
		add(text[t.start:t.end])
	case "pattern_list", "tuple_pattern", "list_pattern", "tuple", "list", "expression_list",
		"parenthesized_expression", "list_splat_pattern", "list_splat", "as_pattern_target":
		for _, k := range t.namedKids() {
			targetNames(k, text, add)
		}
	}
}
