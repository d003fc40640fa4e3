// Command badline prints the wrong first line; it tests Start's check.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "stderr on the way out")
	fmt.Println("hello from badline")
}
