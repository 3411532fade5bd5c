package rules

// SetPanicHook lets the external tests fail on a rule panic that Check recovered from.
func SetPanicHook(f func(any)) { panicHook = f }
