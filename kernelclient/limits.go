package kernelclient

// Size limits of the files premortem reads from settings, flags and discovery. Each is far
// above what a real file of its kind holds and far below what would hurt the server.
const (
	// MaxConnectionFileSize bounds a kernel connection file (a real one is ~300 bytes).
	MaxConnectionFileSize = 64 << 10
	// MaxServerInfoSize bounds a jpserver-*.json / nbserver-*.json file.
	MaxServerInfoSize = 64 << 10
	// MaxKernelSpecSize bounds a kernelspec's kernel.json.
	MaxKernelSpecSize = 1 << 20
)
