package kernelclient

import (
	"os"
	"strings"
)

// procStatFields reads a /proc stat file (a process's or a thread's) and returns its fields
// after the command name: state first, then the parent's pid, and so on. The name is in
// parentheses and may itself hold spaces and ") ", so the split is at the last ')'. ok is
// false when the file cannot be read or is not in that form (not Linux, the process gone).
func procStatFields(path string) (fields []string, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, false
	}
	fields = strings.Fields(s[i+1:])
	return fields, len(fields) > 0
}
