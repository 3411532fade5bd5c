package rules

// knownattrs.go is generated from the target kernel's libraries.
//go:generate /usr/bin/python3 gen_knownattrs.py
//go:generate gofmt -w knownattrs.go
