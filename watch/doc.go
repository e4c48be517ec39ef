// Package watch is a from-scratch client for the Kubernetes list/watch
// protocol.
//
// The protocol in a page:
//   - A list is GET on a collection (/api/v1/pods, /apis/apps/v1/namespaces/NS/deployments).
//     With limit=N the answer is one page whose metadata.continue, when not
//     empty, fetches the next. metadata.resourceVersion (RV) of the list is
//     the point in history the list shows.
//   - resourceVersion="" reads consistently from etcd; "0" accepts any state
//     the server has cached (and the real server then ignores limit); an RV
//     with resourceVersionMatch=NotOlderThan or Exact asks for that point.
//   - A watch is the same GET with watch=1 and resourceVersion=RV: a stream
//     of JSON objects {"type": ..., "object": ...}, one per change after RV,
//     chunked over HTTP/1.1 or in DATA frames over HTTP/2. There are no
//     newlines or length prefixes to rely on: the client frames objects itself.
//   - allowWatchBookmarks=true adds BOOKMARK events whose object carries only
//     a newer metadata.resourceVersion, so a client can resume from there.
//   - sendInitialEvents=true with resourceVersionMatch=NotOlderThan streams
//     the current state as ADDED events first, ended by a bookmark annotated
//     k8s.io/initial-events-end: "true" (a streaming list).
//   - An RV older than the server's history answers 410: on a watch as an
//     ERROR event inside a 200 stream (reason Expired or Gone), on a list or
//     an old continue token as a 410 Status response. The client must relist.
//   - Every error answer is a Status object: code, reason, message, details.
//   - With Accept: application/vnd.kubernetes.protobuf the server answers
//     built-in resources in protobuf: bodies are "k8s\x00" and a
//     runtime.Unknown envelope around the object's message; a watch is a
//     sequence of 4-byte big-endian length-prefixed WatchEvent messages.
//     Custom resources are answered in JSON whatever the Accept header
//     says, so the client lists JSON second in it and decodes either.
//   - With Accept: application/json;as=Table;g=meta.k8s.io;v=v1 (kubectl
//     get's header, AcceptTable) the server prints: a list is a Table whose
//     rows hold cells and, by default, each object's PartialObjectMetadata;
//     a watch event's object is a one-row Table, column definitions on the
//     first event only, a BOOKMARK's too. Form FormTable (or
//     FormTableObject, rows with whole objects) in ListOptions and
//     WatchOptions asks for it; DecodeList hands each row to T as such a
//     one-row Table, so one T decodes lists and watches alike.
//
// The connection (config, credentials, transport, rate limit, status
// errors, discovery) is package kube's; this package sends its requests
// through a *kube.Client and gives:
//   - List, ListEach and Watch, generic over the caller's object type (any T
//     satisfying Object: *corev1.Pod, a slim struct embedding metav1.ObjectMeta,
//     *metav1.PartialObjectMetadata), of the objects of a resource in a
//     kube.Scope (a namespace, label and field selectors) read as the
//     options say (resourceVersion, pages, form), with idle deadlines when asked for
//     (ListOptions and WatchOptions.IdleTimeout; none by default) so a silent
//     server cannot hang a caller. A watch lasts as long as the server keeps
//     it open; kube.Config.HTTP.Timeout does not bound it. Errors are
//     *kube.StatusError inside a *kube.OpError, never retried here: the
//     caller's policy decides (the informer's backoff).
//   - A Decoder that frames and decodes a watch stream incrementally, whatever
//     the chunk boundaries, with a bounded frame size (DefaultMaxFrameSize) and
//     nesting depth (MaxNestingDepth), optionally on several cores
//     (DecoderOptions.Parallelism) while delivering events in order. Bad input
//     ends the stream with a *DecodeError naming the offset and the problem;
//     it never panics, and no object is ever skipped silently. Close is safe
//     while Next runs. DecodeList streams a list's items one by one.
//   - JSON strings decoded as Kubernetes' own decoder (sigs.k8s.io/json)
//     decodes them: each byte of invalid UTF-8 becomes U+FFFD, in field
//     values, map keys and values (labels, annotations) alike, and the
//     object is kept; raw JSON such as managedFields' FieldsV1 is kept as
//     sent. Protobuf strings are kept as sent, as generated Unmarshal
//     keeps them. Field names are matched case-sensitively and as written,
//     without unescaping (see json.go).
//   - Protobuf for object types with a generated Unmarshal (every k8s.io/api
//     type; see ProtobufObject and Config.Encoding.ContentType), decoded by the
//     package itself around the object's own Unmarshal, lists item by item,
//     with JSON as the fallback the server may choose. An object of a
//     recursive type (a CRD, through JSONSchemaProps) nested deeper than
//     MaxNestingDepth messages is refused before its Unmarshal runs, so no
//     input can exhaust the decoding goroutine's stack (see depth.go).
//   - ERROR events, JSON or protobuf, as *kube.StatusError (kube.IsGone for
//     a too-old resourceVersion).
//   - Raw, an object type that keeps each object's bytes (its protobuf
//     message or its JSON) in one pointer-free allocation and reads only
//     the metadata keys, indexes and selectors need, validating the JSON
//     and the protobuf framing as it goes; RawCodec decodes it into any T
//     later. The informer's compact store is built on it.
package watch
