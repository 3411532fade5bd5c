package finding

//go:generate go run ./gendoc ../docs/rules.md
