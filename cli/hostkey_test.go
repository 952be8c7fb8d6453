package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// serve leaves an existing host-key folder's mode as it found it when it creates the key
// there (keygen would make it 0700); a folder it creates itself is 0700.
func TestServeLeavesTheHostKeyFolderAsFound(t *testing.T) {
	shared := filepath.Join(t.TempDir(), "keys")
	if err := os.Mkdir(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(shared, 0o755) // whatever the umask
	startServer(t, serveOptions{authorizedKeys: writeKeys(t, testKey(t)), hostKey: filepath.Join(shared, "host_key")})
	if st, err := os.Stat(shared); err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("existing folder: mode %v (%v), want 0755 as found", st.Mode().Perm(), err)
	}
	if st, err := os.Stat(filepath.Join(shared, "host_key")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("host key: %v", err)
	}
	fresh := filepath.Join(t.TempDir(), "new", "dir")
	startServer(t, serveOptions{authorizedKeys: writeKeys(t, testKey(t)), hostKey: filepath.Join(fresh, "host_key")})
	if st, err := os.Stat(fresh); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("created folder: mode %v (%v), want 0700", st.Mode().Perm(), err)
	}
}
