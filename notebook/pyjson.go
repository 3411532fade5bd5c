package notebook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// writeJSON encodes v the way Jupyter (nbformat) writes notebooks: Python's
// json.dumps(v, sort_keys=True, indent=1, ensure_ascii=False, separators=(",", ": ")).
// encoding/json differs in ways that break byte-stable round trips: it escapes "<", ">",
// "&", U+2028 and U+2029, and prints numbers its own way. json.Number values (what
// ParseIpynb decodes numbers into) are written exactly as read.
func writeJSON(buf *bytes.Buffer, v any, depth int) error {
	if depth > 10000 {
		return fmt.Errorf("JSON nested too deeply")
	}
	switch v := v.(type) {
	case nil:
		buf.WriteString("null")
	case bool:
		buf.WriteString(strconv.FormatBool(v))
	case string:
		writeJSONString(buf, v)
	case json.Number:
		if !json.Valid([]byte(v)) {
			return fmt.Errorf("invalid number %q", string(v))
		}
		buf.WriteString(string(v))
	case float64:
		return writeFloat(buf, v)
	case float32:
		return writeFloat(buf, float64(v))
	case int:
		buf.WriteString(strconv.Itoa(v))
	case int64:
		buf.WriteString(strconv.FormatInt(v, 10))
	case int32:
		buf.WriteString(strconv.FormatInt(int64(v), 10))
	case uint32:
		buf.WriteString(strconv.FormatUint(uint64(v), 10))
	case uint64:
		buf.WriteString(strconv.FormatUint(v, 10))
	case map[string]any:
		if len(v) == 0 {
			buf.WriteString("{}")
			return nil
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		// Byte order of UTF-8 is code point order, which is what Python's sort uses.
		slices.Sort(keys)
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			newline(buf, depth+1)
			writeJSONString(buf, k)
			buf.WriteString(": ")
			if err := writeJSON(buf, v[k], depth+1); err != nil {
				return err
			}
		}
		newline(buf, depth)
		buf.WriteByte('}')
	case []any:
		if len(v) == 0 {
			buf.WriteString("[]")
			return nil
		}
		buf.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				buf.WriteByte(',')
			}
			newline(buf, depth+1)
			if err := writeJSON(buf, e, depth+1); err != nil {
				return err
			}
		}
		newline(buf, depth)
		buf.WriteByte(']')
	default:
		// Values of other Go types (structs a caller put in metadata): go through
		// encoding/json to plain JSON values, then write those.
		data, err := json.Marshal(v)
		if err != nil {
			return err
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var plain any
		if err := dec.Decode(&plain); err != nil {
			return err
		}
		return writeJSON(buf, plain, depth)
	}
	return nil
}

func newline(buf *bytes.Buffer, depth int) {
	buf.WriteByte('\n')
	for range depth {
		buf.WriteByte(' ')
	}
}

// writeFloat writes f as Python's float repr would, except that integral values (which came
// from JSON integers through a float64 decode) are written as integers.
func writeFloat(buf *bytes.Buffer, f float64) error {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Errorf("number %v has no JSON form", f)
	}
	abs := math.Abs(f)
	switch {
	case f == math.Trunc(f) && abs < 1e21:
		buf.WriteString(strconv.FormatFloat(f, 'f', -1, 64))
	case abs != 0 && (abs < 1e-4 || abs >= 1e16):
		buf.WriteString(strconv.FormatFloat(f, 'e', -1, 64))
	default:
		buf.WriteString(strconv.FormatFloat(f, 'f', -1, 64))
	}
	return nil
}

// writeJSONString writes s quoted with Python's ensure_ascii=False escapes: only '"', '\\'
// and control characters are escaped, all other characters are written as they are.
func writeJSONString(buf *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	buf.WriteByte('"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				// Not UTF-8: write U+FFFD, as encoding/json does.
				buf.WriteString(s[start:i])
				buf.WriteString("\uFFFD")
				i++
				start = i
				continue
			}
			i += size
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' {
			i++
			continue
		}
		buf.WriteString(s[start:i])
		switch c {
		case '"':
			buf.WriteString(`\"`)
		case '\\':
			buf.WriteString(`\\`)
		case '\n':
			buf.WriteString(`\n`)
		case '\r':
			buf.WriteString(`\r`)
		case '\t':
			buf.WriteString(`\t`)
		case '\b':
			buf.WriteString(`\b`)
		case '\f':
			buf.WriteString(`\f`)
		default:
			buf.WriteString(`\u00`)
			buf.WriteByte(hex[c>>4])
			buf.WriteByte(hex[c&0xf])
		}
		i++
		start = i
	}
	buf.WriteString(s[start:])
	buf.WriteByte('"')
}
