package watch

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"unsafe"

	"github.com/kwatch/kwatch/internal/pbwire"
	"github.com/kwatch/kwatch/kube"
	"github.com/stretchr/testify/require"
)

const protoWatchType = "application/vnd.kubernetes.protobuf;stream=watch"

// protoClient is a client asking for protobuf from a server running h.
func protoClient(t *testing.T, h http.HandlerFunc) *kube.Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, err := kube.NewClient(&kube.Config{Host: srv.URL, Encoding: kube.EncodingConfig{ContentType: kube.ContentTypeProtobuf}})
	require.NoError(t, err)
	return c
}

// writeChunks writes b in random pieces, flushing each, so the decoder
// sees frames split anywhere.
func writeChunks(w http.ResponseWriter, b []byte, rng *rand.Rand) {
	for len(b) > 0 {
		n := min(len(b), 1+rng.IntN(300))
		w.Write(b[:n])
		w.(http.Flusher).Flush()
		b = b[n:]
	}
}

func TestProtobufWatchDecodesEveryEventAndTheGoneError(t *testing.T) {
	var stream []byte
	for i := range 50 {
		stream = append(stream, watchFrame(Modified, "Pod", podMsg("ns", "pod", strconv.Itoa(100+i)))...)
	}
	stream = append(stream, watchFrame(Bookmark, "Pod", podMsg("", "", "200", InitialEventsEndAnnotation, "true"))...)
	stream = append(stream, watchFrame(Error, "Status", statusMsg(410, "Expired", "too old resource version: 1 (150)", "", 0))...)
	for _, par := range []int{1, 4} {
		var accept string
		c := protoClient(t, func(w http.ResponseWriter, r *http.Request) {
			accept = r.Header.Get("Accept")
			w.Header().Set("Content-Type", protoWatchType)
			writeChunks(w, stream, rand.New(rand.NewPCG(uint64(par), 1)))
		})
		s, err := Watch[*protoPod](context.Background(), c, kube.Pods, kube.Scope{Namespace: "ns"}, WatchOptions{Decoder: DecoderOptions{Parallelism: par}})
		require.NoError(t, err)
		require.Equal(t, "application/vnd.kubernetes.protobuf,application/json", accept)
		for i := range 50 {
			ev, err := s.Next()
			require.NoError(t, err, "event %d", i)
			require.Equal(t, Modified, ev.Type)
			require.Equal(t, strconv.Itoa(100+i), ev.Object.ResourceVersion)
			require.Equal(t, "pod", ev.Object.Name)
			require.Positive(t, ev.Object.Rest)
		}
		ev, err := s.Next()
		require.NoError(t, err)
		require.Equal(t, Bookmark, ev.Type)
		require.Equal(t, "true", ev.Object.Annotations[InitialEventsEndAnnotation])
		_, err = s.Next()
		require.True(t, kube.IsGone(err), "%v", err)
		se, _ := kube.AsStatus(err)
		require.Equal(t, "Expired", se.Reason)
		require.Contains(t, se.Message, "too old resource version")
		s.Close()
	}
}

func TestProtobufWatchBadInputEndsWithANamedError(t *testing.T) {
	good := watchFrame(Added, "Pod", podMsg("ns", "a", "1"))
	frame := func(ev []byte) []byte { return append(beUint32(len(ev)), ev...) }
	cases := []struct {
		name   string
		stream []byte
		is     error
		msg    string
	}{
		{"frame over the limit", beUint32(DefaultMaxFrameSize), ErrFrameTooLarge, "exceeds"},
		{"cut inside a frame", good[:len(good)-3], io.ErrUnexpectedEOF, ""},
		{"cut inside the length", good[:2], io.ErrUnexpectedEOF, ""},
		{"unknown type", frame(pb(nil).str(1, "RENAMED").bytes(2, pb(nil).bytes(1, protoBody("Pod", podMsg("n", "a", "1"))))), ErrUnknownEventType, "RENAMED"},
		{"no type", frame(pb(nil).bytes(2, pb(nil).bytes(1, protoBody("Pod", podMsg("n", "a", "1"))))), ErrUnknownEventType, "no type"},
		{"no object", frame(pb(nil).str(1, "ADDED")), nil, "no object"},
		{"no magic", frame(pb(nil).str(1, "ADDED").bytes(2, pb(nil).bytes(1, podMsg("n", "a", "1")))), nil, "magic"},
		{"truncated field", frame(append(pb(nil).str(1, "ADDED"), 0x12, 0x7f, 1)), nil, "truncated"},
		{"overlong varint", frame([]byte{0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}), nil, "longer than 10 bytes"},
		{"object that does not decode", watchFrame(Added, "Pod", pb(nil).bytes(1, []byte{0x0a, 0x50})), nil, "does not decode into *watch.protoPod"},
		{"decoder panic", watchFrame(Added, "Pod", podMsg("n", "panic", "1")), nil, "panicked"},
		{"compressed envelope", frame(pb(nil).str(1, "ADDED").bytes(2, pb(nil).bytes(1, append(protoBody("Pod", podMsg("n", "a", "1")), 0x1a, 4, 'g', 'z', 'i', 'p')))), nil, "content encoding"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := protoClient(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", protoWatchType)
				w.Write(good)
				w.Write(tc.stream)
			})
			s, err := Watch[*protoPod](context.Background(), c, kube.Pods, kube.Scope{}, WatchOptions{})
			require.NoError(t, err)
			defer s.Close()
			ev, err := s.Next()
			require.NoError(t, err)
			require.Equal(t, "a", ev.Object.Name)
			_, err = s.Next()
			require.Error(t, err)
			var de *DecodeError
			require.True(t, errors.As(err, &de), "%T %v", err, err)
			if tc.is != nil {
				require.ErrorIs(t, err, tc.is)
			}
			require.Contains(t, err.Error(), tc.msg)
			require.Equal(t, int64(len(good)), de.Offset)
		})
	}
}

func beUint32(n int) []byte { return []byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)} }

func TestProtobufListStreamsItemsAndMetadata(t *testing.T) {
	items := make([][]byte, 20)
	for i := range items {
		items[i] = podMsg("ns", "pod-"+strconv.Itoa(i), strconv.Itoa(10+i))
	}
	body := protoBody("PodList", listMsg("77", "next-token", 5, items...))
	c := protoClient(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", kube.ContentTypeProtobuf)
		writeChunks(w, body, rand.New(rand.NewPCG(3, 4)))
	})
	page, err := List[*protoPod](context.Background(), c, kube.Pods, kube.Scope{Namespace: "ns"}, ListOptions{Limit: 20})
	require.NoError(t, err)
	require.Equal(t, "77", page.ResourceVersion)
	require.Equal(t, "next-token", page.Continue)
	require.NotNil(t, page.RemainingItemCount)
	require.Equal(t, int64(5), *page.RemainingItemCount)
	require.Len(t, page.Items, 20)
	for i, p := range page.Items {
		require.Equal(t, "pod-"+strconv.Itoa(i), p.Name)
		require.Equal(t, strconv.Itoa(10+i), p.ResourceVersion)
	}

	// An empty list has no items field at all.
	empty := protoBody("PodList", listMsg("78", "", -1))
	c = protoClient(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", kube.ContentTypeProtobuf)
		w.Write(empty)
	})
	page, err = List[*protoPod](context.Background(), c, kube.Pods, kube.Scope{}, ListOptions{})
	require.NoError(t, err)
	require.Empty(t, page.Items)
	require.Equal(t, "78", page.ResourceVersion)
	require.Nil(t, page.RemainingItemCount)
}

func TestProtobufListBadInput(t *testing.T) {
	item := podMsg("ns", "a", "1")
	cases := []struct {
		name string
		body []byte
		is   error
		msg  string
	}{
		{"no magic", listMsg("1", "", -1, item), nil, "magic"},
		{"not a list", protoBody("Pod", item), ErrNotList, `"Pod"`},
		{"a Status", protoBody("Status", statusMsg(500, "InternalError", "etcd is gone", "", 0)), ErrNotList, "etcd is gone"},
		{"no object", append(pbwire.Magic[:], pb(nil).bytes(1, pb(nil).str(2, "PodList"))...), ErrNotList, "holds no object"},
		{"cut in an item", protoBody("PodList", listMsg("1", "", -1, item))[:40], io.ErrUnexpectedEOF, ""},
		{"item over the limit", append(pbwire.Magic[:], pb(nil).bytes(1, pb(nil).str(2, "PodList")).varint(2<<3|pbwire.Bytes).varint(1<<20).varint(2<<3|pbwire.Bytes).varint(1<<30)...), ErrFrameTooLarge, "list item 0"},
		{"item that does not decode", protoBody("PodList", listMsg("1", "", -1, []byte{0x0a, 0x50})), nil, "list item 0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := protoClient(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", kube.ContentTypeProtobuf)
				w.Write(tc.body)
			})
			_, err := List[*protoPod](context.Background(), c, kube.Pods, kube.Scope{}, ListOptions{})
			require.Error(t, err)
			if tc.is != nil {
				require.ErrorIs(t, err, tc.is)
			}
			require.Contains(t, err.Error(), tc.msg)
		})
	}
}

func TestProtobufErrorBodies(t *testing.T) {
	body := protoBody("Status", statusMsg(410, "Expired", "The provided continue parameter is too old", "fresh-token", 0))
	c := protoClient(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", kube.ContentTypeProtobuf)
		w.WriteHeader(http.StatusGone)
		w.Write(body)
	})
	_, err := List[*protoPod](context.Background(), c, kube.Pods, kube.Scope{}, ListOptions{Continue: "old"})
	require.True(t, kube.IsGone(err), "%v", err)
	se, _ := kube.AsStatus(err)
	require.Equal(t, "Expired", se.Reason)
	require.Equal(t, "fresh-token", se.Continue)
	require.Equal(t, []kube.StatusCause{{Type: "FieldValueInvalid", Message: "bad", Field: "spec.x"}}, se.Causes)

	busy := protoBody("Status", statusMsg(429, "TooManyRequests", "slow down", "", 7))
	c = protoClient(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", kube.ContentTypeProtobuf)
		w.WriteHeader(http.StatusTooManyRequests)
		w.Write(busy)
	})
	_, err = Watch[*protoPod](context.Background(), c, kube.Pods, kube.Scope{}, WatchOptions{})
	ra, ok := kube.RetryAfter(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, "7s", ra.String())

	// A protobuf error body that does not decode keeps the HTTP code.
	c = protoClient(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", kube.ContentTypeProtobuf)
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte("k8s\x00\xff"))
	})
	_, err = List[*protoPod](context.Background(), c, kube.Pods, kube.Scope{}, ListOptions{})
	se, ok = kube.AsStatus(err)
	require.True(t, ok)
	require.Equal(t, int32(503), se.Code)
	require.Contains(t, se.Message, "undecodable protobuf")
}

func TestProtobufFallsBackToJSON(t *testing.T) {
	// A server that cannot encode the resource as protobuf (custom
	// resources, the simulator) answers JSON; the client decodes it.
	listBody := readCapture(t, "list-pods-page1.json")
	var accepts []string
	c := protoClient(t, func(w http.ResponseWriter, r *http.Request) {
		accepts = append(accepts, r.Header.Get("Accept"))
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Has("watch") {
			w.Write([]byte(`{"type":"ADDED","object":{"metadata":{"name":"x","namespace":"n","resourceVersion":"9"}}}` + "\n"))
			return
		}
		w.Write(listBody)
	})
	page, err := List[*protoPod](context.Background(), c, kube.Pods, kube.Scope{}, ListOptions{})
	require.NoError(t, err)
	require.NotEmpty(t, page.Items)
	require.NotEmpty(t, page.Items[0].Name)
	s, err := Watch[*protoPod](context.Background(), c, kube.Pods, kube.Scope{}, WatchOptions{})
	require.NoError(t, err)
	defer s.Close()
	ev, err := s.Next()
	require.NoError(t, err)
	require.Equal(t, "x", ev.Object.Name)
	require.Equal(t, []string{acceptProtobuf, acceptProtobuf}, accepts)
}

func TestContentTypeOnlyAsksProtobufWhenItCanDecodeIt(t *testing.T) {
	var accepts []string
	h := func(w http.ResponseWriter, r *http.Request) {
		accepts = append(accepts, r.Header.Get("Accept"))
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"kind":"PodList","metadata":{"resourceVersion":"1"},"items":[]}`))
	}
	proto := protoClient(t, h)
	srv := httptest.NewServer(http.HandlerFunc(h))
	defer srv.Close()
	plain, err := kube.NewClient(&kube.Config{Host: srv.URL, Encoding: kube.EncodingConfig{ContentType: kube.ContentTypeJSON}})
	require.NoError(t, err)
	ctx := context.Background()
	_, err = List[*protoPod](ctx, plain, kube.Pods, kube.Scope{}, ListOptions{}) // JSON when asked
	require.NoError(t, err)
	_, err = List[*testPod](ctx, proto, kube.Pods, kube.Scope{}, ListOptions{}) // cannot decode protobuf
	require.NoError(t, err)
	_, err = List[*protoPod](ctx, proto, kube.Pods, kube.Scope{}, ListOptions{Form: FormMetadata})
	require.NoError(t, err)
	require.Equal(t, []string{acceptJSON, acceptJSON, acceptMetaList}, accepts)

	// By default, a type that can decode protobuf asks for it.
	def, err := kube.NewClient(&kube.Config{Host: srv.URL})
	require.NoError(t, err)
	_, err = List[*protoPod](ctx, def, kube.Pods, kube.Scope{}, ListOptions{})
	require.NoError(t, err)
	require.Equal(t, acceptProtobuf, accepts[len(accepts)-1])

	// Protobuf that was not asked for is refused with a clear error.
	c := protoClient(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", kube.ContentTypeProtobuf)
		w.Write(protoBody("PodList", listMsg("1", "", -1)))
	})
	_, err = List[*testPod](ctx, c, kube.Pods, kube.Scope{}, ListOptions{})
	require.ErrorIs(t, err, errWrongEncoding)
	_, err = Watch[*testPod](ctx, c, kube.Pods, kube.Scope{}, WatchOptions{})
	require.ErrorIs(t, err, errWrongEncoding)

	_, err = kube.NewClient(&kube.Config{Host: srv.URL, Encoding: kube.EncodingConfig{ContentType: "application/cbor"}})
	require.ErrorContains(t, err, `Config.Encoding.ContentType "application/cbor" is not supported`)
}

func TestProtobufObjectsAreInternedUnlessAskedNot(t *testing.T) {
	body := protoBody("PodList", listMsg("9", "", -1, podMsg("team-a", "x", "1"), podMsg("team-a", "y", "2")))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", kube.ContentTypeProtobuf)
		w.Write(body)
	}))
	defer srv.Close()
	for _, noIntern := range []bool{false, true} {
		c, err := kube.NewClient(&kube.Config{Host: srv.URL, Encoding: kube.EncodingConfig{NoProtobufIntern: noIntern}})
		require.NoError(t, err)
		page, err := List[*protoPod](context.Background(), c, kube.Pods, kube.Scope{}, ListOptions{})
		require.NoError(t, err)
		a, b := page.Items[0].Namespace, page.Items[1].Namespace
		require.Equal(t, a, b)
		require.Equal(t, !noIntern, unsafe.StringData(a) == unsafe.StringData(b), "noIntern=%v", noIntern)
	}
}

// TestProtobufKeepsInvalidUTF8: generated Unmarshal code keeps a string's
// bytes as sent, and so does kwatch's protobuf path, interning included;
// only JSON strings get U+FFFD (jsonstring.go).
func TestProtobufKeepsInvalidUTF8(t *testing.T) {
	body := protoBody("PodList", listMsg("9", "", -1, podMsg("team-\xff", "x\xfe", "1", "note", "a\xc3"), podMsg("team-\xff", "y", "2")))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", kube.ContentTypeProtobuf)
		w.Write(body)
	}))
	defer srv.Close()
	for _, noIntern := range []bool{false, true} {
		c, err := kube.NewClient(&kube.Config{Host: srv.URL, Encoding: kube.EncodingConfig{NoProtobufIntern: noIntern}})
		require.NoError(t, err)
		page, err := List[*protoPod](context.Background(), c, kube.Pods, kube.Scope{}, ListOptions{})
		require.NoError(t, err)
		require.Len(t, page.Items, 2)
		got := page.Items[0]
		require.Equal(t, "team-\xff", got.Namespace, "noIntern=%v", noIntern)
		require.Equal(t, "x\xfe", got.Name, "noIntern=%v", noIntern)
		require.Equal(t, map[string]string{"note": "a\xc3"}, got.Annotations, "noIntern=%v", noIntern)
		require.Equal(t, "team-\xff", page.Items[1].Namespace)
	}
}

// TestChooseEncoding: what a list and a watch ask for, from one place, for
// each combination of the options (Table wins over metadata, metadata
// over JSON; protobuf only for a type that decodes it on a client that
// allows it).
func TestChooseEncoding(t *testing.T) {
	proto, err := kube.NewClient(&kube.Config{Host: "http://127.0.0.1:1"})
	require.NoError(t, err)
	jsonOnly, err := kube.NewClient(&kube.Config{Host: "http://127.0.0.1:1", Encoding: kube.EncodingConfig{ContentType: kube.ContentTypeJSON}})
	require.NoError(t, err)
	tests := []struct {
		name      string
		c         *kube.Client
		a         asked
		want      string
		wantCodec bool
	}{
		{"default", proto, asked{}, acceptProtobuf, true},
		{"json client", jsonOnly, asked{}, acceptJSON, false},
		{"json asked", proto, asked{json: true}, acceptJSON, false},
		{"metadata", proto, asked{form: FormMetadata, json: true}, acceptMetaList, false},
		{"table", proto, asked{form: FormTable, json: true}, AcceptTable, false},
	}
	for _, tc := range tests {
		got := chooseEncoding[*protoPod](tc.c, tc.a, acceptMetaList)
		require.Equal(t, tc.want, got.accept, tc.name)
		require.Equal(t, tc.wantCodec, got.codec != nil, tc.name)
		isProto, err := got.protobuf(kube.ContentTypeProtobuf)
		if tc.wantCodec {
			require.NoError(t, err, tc.name)
			require.True(t, isProto, tc.name)
		} else {
			require.ErrorIs(t, err, errWrongEncoding, "%s: protobuf not asked for", tc.name)
		}
		isProto, err = got.protobuf(kube.ContentTypeJSON)
		require.NoError(t, err, tc.name)
		require.False(t, isProto, "%s: JSON is always read", tc.name)
	}
}
