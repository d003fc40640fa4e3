// Package gosrc reads a Go program as Go, with types: the program's own
// packages from the files a bundle keeps, and the libraries its frames run
// in from their source on this machine (the Go root of the target's
// version, the module cache). It answers what the wait-for reasoning asks
// of the code, each answer with the statement it rests on:
//
//   - what the statement a frame blocks in waits on ([Program.WaitAt]),
//     read past the runtime and the sync types it models (Mutex, RWMutex,
//     WaitGroup, Cond); the rest of sync (Once, Map, Pool) is code like
//     any other;
//   - which statements of the program can operate on that object, and how
//     (send, receive, close, Done, Unlock, Signal, …);
//   - what a goroutine can still do from where its frames are
//     ([Program.Future]): the rest of each frame's function by its
//     control-flow graph (golang.org/x/tools/go/cfg; a range over a
//     channel receives at its loop's head on every turn) and what the
//     calls in it reach; one shown only in the wrapper the compiler made
//     for its go statement has yet to run the call it makes (gowrap.go);
//   - what functions handed to time.AfterFunc can release when their
//     timer fires, or to context.AfterFunc when their context is done
//     ([Query.TimerReleases]), and whether a context's cancel is ever
//     called ([Class.CancelCalled]);
//   - whether a frame may hold an object its goroutine was handed when
//     it started, or only ones it made ([Program.Given]);
//   - which object a release acts on, when a pointer the frames print
//     places it ([Where]);
//   - how many objects of a class a goroutine's rest can act on at most,
//     and which calls act only on objects a local not yet defined will
//     hold ([Cap] Objects; origin.go and freshcall.go, over access
//     paths: path.go).
//
// Objects are abstract: the storage a value can flow to, found by
// unification over the typed syntax (Steensgaard's points-to analysis,
// field-based: every instance of a struct field is one object). A class
// of objects that never reaches a package-level variable, a struct field,
// a container, a channel or code not read is held only by the frames of
// the goroutines it was passed to ([Class.Escapes] is false), so only
// those can operate on one instance of it.
//
// Programs are partial: a package whose source is not read is
// type-checked as empty (its uses are invalid), and an object passed to
// code whose body is not read is taken as operated on by that code. Go's
// own go/ssa needs every dependency type-checked without error, which a
// bundle rarely gives; go/types keeps working with imports unresolved.
package gosrc
