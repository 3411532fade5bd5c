package llm

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkBuildPrompt measures prompt building (slicing, facts, token counting) for a
// 40-cell notebook.
func BenchmarkBuildPrompt(b *testing.B) {
	var ex []CellText
	ex = append(ex, CellText{Index: 0, ExecutionOrder: 1, Text: "import pandas as pd\nimport numpy as np"})
	for i := 1; i < 40; i++ {
		var s strings.Builder
		fmt.Fprintf(&s, "df%d = df%d.copy()\n", i, i-1)
		for j := 0; j < 10; j++ {
			fmt.Fprintf(&s, "df%d['c%d'] = np.log1p(df%d['c%d']) * %d\n", i, j, i, j, j)
		}
		s.WriteString("df" + fmt.Sprint(i) + ".head()")
		ex = append(ex, CellText{Index: i, ExecutionOrder: i + 1, Text: s.String()})
	}
	ex[1].Text = "df1 = pd.read_csv('x.csv')"
	in := Input{Executed: ex, Target: CellText{Index: 40, Text: "df39['c3'].astype(int)"}}
	in.Dependencies = SliceDependencies(ex, in.Target.Text)
	CountTokens("warm up the tokenizer")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		BuildPrompt(in, Config{})
	}
}
