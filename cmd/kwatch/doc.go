// Command kwatch lists and watches Kubernetes resources: a "kubectl get -w"
// that never gives up, built on kwatch's informer.
//
//   - "kwatch pods" (or "kwatch get pods") prints the initial list, then
//     every change, until interrupted. Disconnects, 410s and server restarts
//     are the informer's business: it relists and resumes, and the printed
//     stream stays true (a delete missed while disconnected is printed as
//     DELETED), so a reader applying the events in order ends with the
//     server's state.
//   - Any resource is found through discovery by plural, singular, short
//     name or kind. Tables are the server's (as=Table, listing and
//     watching), printed as kubectl prints them: its columns (priority-1
//     ones with -o wide), upper-cased headers, kubectl's cell formatting;
//     NAME and AGE for a server that cannot print a Table.
//   - Every change is printed, in order (informer.Ordered): the printed
//     stream is the server's events; only after a relist is it a computed
//     difference. If the output falls more than 65,536 changes behind, the
//     informer merges later changes per object until it catches up, and
//     stderr says how many were merged.
//   - Before the informer starts, one small list (limit=1) checks the
//     server, the credentials and the selectors, so a refusal (401, 403,
//     404, a bad selector) or an unreachable server is one clear line and a
//     non-zero exit rather than an informer retrying forever. Until the
//     first sync, a 401 or 403 seen by the informer also ends the command,
//     and so does an initial list that makes no progress for
//     --request-timeout; other errors are retried, as after the sync.
//   - The command line is kubectl's, on cobra and pflag: "get TYPE
//     [NAME...]", "TYPE/NAME", "TYPE1,TYPE2" (listing once), "kwatch TYPE"
//     as a shortcut (withGetShortcut), help, and completion scripts that
//     ask the server (discovery for types, lists for names and
//     namespaces). kubectl's output forms are here too: -o jsonpath and
//     custom-columns (printers.JSONPath, kubectl's syntax and behaviours),
//     --sort-by, -L, --show-labels, --show-kind, --watch-only; several
//     types print as one List or one set of columns where kubectl does.
//     cmd/kwatch/golden_test.go holds kwatch to the real kubectl's output.
//   - Named objects are fetched first: a missing one is kubectl's
//     `Error from server (NotFound): ...` and exit 1, before any watch.
//     Any refusal (4xx) the server words but a 401 is printed as kubectl prints
//     it (describe, listRefusal in connect.go), and so are names given
//     beside a selector and kubectl's "No resources found" notices.
//   - Fail fast: TLS spoken to a plain HTTP server (or the reverse), a
//     certificate the client does not trust, a refused handshake or
//     connection end the command at once with one line; configuration
//     errors name the flag or the kubeconfig field, never Go field names.
//     "-s HOST:PORT" without a scheme is http, as kubectl v1.37 sends it.
//   - While the watch is down, a status line on a terminal's stderr says
//     "reconnecting since 15:04:05 (42s)" and the last error (status.go,
//     monitor); rows printed meanwhile erase it first. Elsewhere one line
//     says so. A line says when watching resumes.
//   - "--diff" prints under each MODIFIED change the fields it changed since
//     the version printed before it (package internal/diff; diffsink.go),
//     noise left out unless --diff-noise, and says when a relist computed
//     the change (informer.RelistUpdater); with -o json|yaml each watch
//     event carries the JSON patch instead. Tables then ask for each row's
//     whole object (informer.Options.Form watch.FormTableObject).
//   - "--sim" runs against an in-process simulated cluster; "kwatch sim"
//     serves one for other clients.
//   - "--live", on a terminal, shows the resource as a full-screen table
//     updated in place (package internal/live): rows sorted, statuses
//     coloured and counted, ages ticking, the connection's state and
//     staleness, the cells that changed marked for a few seconds, a
//     selected row whose last changes Enter shows (the --diff fields),
//     keys to filter, sort, pick a namespace, scroll and quit. The
//     informer's logs are not shown there; its connection line says what
//     the informer is doing.
//   - SIGINT and SIGTERM stop the informer, wait for it, flush the output
//     (a row or object is never cut) and exit 0.
//
// Goroutines: run starts them (the informer, the simulated server, the
// metrics server, the progress line) through one group (an errgroup) and
// waits for all before it returns.
package main
