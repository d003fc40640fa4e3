// Command nobuild does not compile; it tests Start's build error.
package main

func main() { undefinedFunction() }
