// Command xr is a subscriber-management appliance for small ISPs: staff API,
// subscriber portal, RADIUS server and job runner in one binary.
package main

import (
	"os"

	"xr/cli"
)

func main() {
	os.Exit(cli.Execute())
}
