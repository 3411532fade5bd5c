package analysis

import "strings"

// builtinNames are the names every IPython kernel namespace has without any cell defining
// them: Python 3.11's builtins plus what IPython adds to the user namespace.
var builtinNames = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range strings.Fields(`
ArithmeticError AssertionError AttributeError BaseException BaseExceptionGroup BlockingIOError
BrokenPipeError BufferError BytesWarning ChildProcessError ConnectionAbortedError ConnectionError
ConnectionRefusedError ConnectionResetError DeprecationWarning EOFError Ellipsis EncodingWarning
EnvironmentError Exception ExceptionGroup False FileExistsError FileNotFoundError FloatingPointError
FutureWarning GeneratorExit IOError ImportError ImportWarning IndentationError IndexError
InterruptedError IsADirectoryError KeyError KeyboardInterrupt LookupError MemoryError
ModuleNotFoundError NameError None NotADirectoryError NotImplemented NotImplementedError OSError
OverflowError PendingDeprecationWarning PermissionError ProcessLookupError RecursionError
ReferenceError ResourceWarning RuntimeError RuntimeWarning StopAsyncIteration StopIteration
SyntaxError SyntaxWarning SystemError SystemExit TabError TimeoutError True TypeError
UnboundLocalError UnicodeDecodeError UnicodeEncodeError UnicodeError UnicodeTranslateError
UnicodeWarning UserWarning ValueError Warning ZeroDivisionError __build_class__ __debug__ __doc__
__import__ __loader__ __name__ __package__ __spec__ abs aiter all anext any ascii bin bool
breakpoint bytearray bytes callable chr classmethod compile complex copyright credits delattr dict
dir divmod enumerate eval exec exit filter float format frozenset getattr globals hasattr hash help
hex id input int isinstance issubclass iter len license list locals map max memoryview min next
object oct open ord pow print property quit range repr reversed round set setattr slice sorted
staticmethod str sum super tuple type vars zip
__builtins__ __builtin__ display get_ipython In Out _ __ ___ _i _ii _iii _oh _ih _dh _sh
`) {
		m[n] = true
	}
	return m
}()

// IsBuiltin reports whether name is defined in every IPython kernel without a cell
// defining it: a Python 3.11 builtin, an IPython namespace name (display, get_ipython, In,
// Out, _, _i, ...), or an output-history variable (_5, _i5).
func IsBuiltin(name string) bool {
	if builtinNames[name] {
		return true
	}
	digits := strings.TrimPrefix(strings.TrimPrefix(name, "_"), "i")
	if !strings.HasPrefix(name, "_") || digits == "" || digits == name {
		return false
	}
	for _, r := range digits {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
