package cli

import (
	"strings"
	"testing"
)

// The command that continues an interrupted sweep repeats --nats without its password.
func TestContinueWithRedactsNATSPassword(t *testing.T) {
	cmd := newSweepCmd()
	if err := cmd.Flags().Parse([]string{"--nats", "nats://alice:s3cretPW@10.0.0.5:4222", "--requests", "50", "--out", "runs/x"}); err != nil {
		t.Fatal(err)
	}
	got := shellJoin(experimentArgs(cmd.Flags(), "out", "resume", "parallel"))
	if strings.Contains(got, "s3cretPW") || !strings.Contains(got, "--nats nats://alice:xxxxx@10.0.0.5:4222") {
		t.Errorf("continue-with arguments %q: want the password redacted", got)
	}
}
