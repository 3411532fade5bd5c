package analysis

import (
	"fmt"
	"reflect"
	"sync"
	"testing"
)

func TestCacheIncremental(t *testing.T) {
	var c Cache
	texts := []string{
		"import pandas as pd\ndf = pd.read_csv('a.csv')\nprint(df.Age.mean())\n",
		"import pandas as pd\ndf = pd.read_csv('a.csv')\nprint(df.Age.median())\n",      // edit in the middle
		"import pandas as pd\ndf = pd.read_csv('a.csv')\nprint(df.Age.median())\nx = y", // append
		"%%time\nimport pandas as pd\ndf = pd.read_csv('a.csv')\nprint(df.Age.median())\nx = y",
		"%%bash\nimport pandas as pd\ndf = pd.read_csv('a.csv')\nprint(df.Age.median())\nx = y",
		"x = 'é中😀' + y", // non-ASCII
		"",
		"def f(:\n",
		"x = 1",
	}
	for i, text := range texts {
		got := c.Facts("cell", text)
		want := ParseCell(text)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("step %d: incremental facts differ from a fresh parse\n got %+v\nwant %+v", i, got, want)
		}
		if again := c.Facts("cell", text); again != got {
			t.Errorf("step %d: unchanged text was re-parsed", i)
		}
	}
	c.Forget("cell")
	if c.Len() != 0 {
		t.Errorf("Len after Forget = %d", c.Len())
	}
}

// TestCacheKeystrokes types a cell one character at a time and deletes it again, checking
// every intermediate state against a fresh parse.
func TestCacheKeystrokes(t *testing.T) {
	final := "def f(a):\n    return a + b  # ü\nfor i in range(3):\n    f(i)\n"
	var c Cache
	for i := 0; i <= len(final); i++ {
		// Prefixes may end inside the multi-byte ü: facts must still match.
		text := final[:i]
		if got, want := c.Facts("k", text), ParseCell(text); !reflect.DeepEqual(got, want) {
			t.Fatalf("after typing %q: facts differ", text)
		}
	}
	for i := 0; i < len(final); i += 3 {
		text := final[:i] + final[min(i+3, len(final)):]
		if got, want := c.Facts("k", text), ParseCell(text); !reflect.DeepEqual(got, want) {
			t.Fatalf("after deleting at %d: facts differ", i)
		}
	}
}

func TestCacheConcurrent(t *testing.T) {
	var c Cache
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				id := fmt.Sprintf("c%d", i%5)
				text := fmt.Sprintf("x%d = y%d + %d", i%5, i, g)
				if f := c.Facts(id, text); len(f.Defs) != 1 {
					t.Errorf("defs = %v", f.Defs)
				}
			}
		}(g)
	}
	wg.Wait()
}

// TestCacheTreesBounded: a cell parsed once keeps no syntax tree, an edited one does, at
// most maxTrees cells keep one (the edited last; an older one's next edit is still
// correct, from scratch), and Close frees them all.
func TestCacheTreesBounded(t *testing.T) {
	var c Cache
	const cells = maxTrees + 8
	for i := 0; i < cells; i++ {
		c.Facts(fmt.Sprint(i), fmt.Sprintf("x%d = %d\n", i, i))
	}
	if n := c.Trees(); n != 0 {
		t.Fatalf("after opening %d cells: %d trees, want 0", cells, n)
	}
	for i := 0; i < cells; i++ {
		c.Facts(fmt.Sprint(i), fmt.Sprintf("x%d = %d + 1\n", i, i))
		if want := min(i+1, maxTrees); c.Trees() != want {
			t.Fatalf("after editing %d cells: %d trees, want %d", i+1, c.Trees(), want)
		}
	}
	for _, i := range []int{0, cells - 1} {
		text := fmt.Sprintf("x%d = %d + 2\nprint(y)\n", i, i)
		if got, want := c.Facts(fmt.Sprint(i), text), ParseCell(text); !reflect.DeepEqual(got, want) {
			t.Errorf("cell %d edited again: facts differ from a fresh parse", i)
		}
	}
	c.Close()
	if c.Trees() != 0 || c.Len() != 0 {
		t.Errorf("after Close: %d trees, %d cells; want none", c.Trees(), c.Len())
	}
}
