package devgw

import (
	"strconv"
	"strings"
	"testing"
)

// BenchmarkConsoleCommand measures one command's round trip through the
// gateway: keystrokes over the WebSocket, the SSH channel to the loopback
// server, its output back (and into the recording).
func BenchmarkConsoleCommand(b *testing.B) {
	e := newEnv(b)
	tm, _, err := e.dial(e.mint(KindNAS, e.nasID))
	if err != nil {
		b.Fatal(err)
	}
	tm.control(Control{Type: "resize", Cols: 80, Rows: 24})
	tm.waitControl("opened")
	tm.waitOut("$ ")
	b.ResetTimer()
	for i := range b.N {
		want := "r" + strconv.Itoa(i) + "\r\n"
		tm.send("echo " + want[:len(want)-2] + "\r")
		for !strings.Contains(tm.output(), "\n"+want) {
			<-tm.more
		}
	}
}

// BenchmarkMintTicket measures minting a ticket (target, credentials and
// caps checked, the hash stored).
func BenchmarkMintTicket(b *testing.B) {
	e := newEnv(b)
	for range b.N {
		e.mint(KindNAS, e.nasID)
	}
}
