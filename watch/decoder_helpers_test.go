package watch

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// testPod is a slim pod: full metadata plus the spec and status fields a
// typical controller reads. *testPod satisfies Object.
type testPod struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              testPodSpec   `json:"spec"`
	Status            testPodStatus `json:"status"`
}

type testPodSpec struct {
	NodeName           string          `json:"nodeName,omitempty"`
	ServiceAccountName string          `json:"serviceAccountName,omitempty"`
	RestartPolicy      string          `json:"restartPolicy,omitempty"`
	Containers         []testContainer `json:"containers"`
}

type testContainer struct {
	Name      string        `json:"name"`
	Image     string        `json:"image"`
	Args      []string      `json:"args,omitempty"`
	Env       []testEnvVar  `json:"env,omitempty"`
	Ports     []testPort    `json:"ports,omitempty"`
	Resources testResources `json:"resources"`
}

type testEnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value,omitempty"`
}

type testPort struct {
	Name          string `json:"name,omitempty"`
	ContainerPort int32  `json:"containerPort"`
	Protocol      string `json:"protocol,omitempty"`
}

type testResources struct {
	Limits   map[string]string `json:"limits,omitempty"`
	Requests map[string]string `json:"requests,omitempty"`
}

type testPodStatus struct {
	Phase             string                `json:"phase,omitempty"`
	PodIP             string                `json:"podIP,omitempty"`
	QOSClass          string                `json:"qosClass,omitempty"`
	StartTime         *metav1.Time          `json:"startTime,omitempty"`
	Conditions        []testCondition       `json:"conditions,omitempty"`
	ContainerStatuses []testContainerStatus `json:"containerStatuses,omitempty"`
}

type testCondition struct {
	Type               string      `json:"type"`
	Status             string      `json:"status"`
	LastTransitionTime metav1.Time `json:"lastTransitionTime"`
}

type testContainerStatus struct {
	Name         string `json:"name"`
	Ready        bool   `json:"ready"`
	RestartCount int32  `json:"restartCount"`
	Image        string `json:"image"`
	ImageID      string `json:"imageID"`
	ContainerID  string `json:"containerID,omitempty"`
	Started      *bool  `json:"started,omitempty"`
}

const captureDir = "../internal/testdata/real-apiserver"

func readCapture(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(captureDir, name))
	require.NoError(tb, err)
	return b
}

// chunkReader returns 1..max bytes per Read, chosen by a seeded generator:
// chunk boundaries fall anywhere, as on the network.
type chunkReader struct {
	data []byte
	rng  *rand.Rand
	max  int
}

func newChunkReader(data []byte, seed uint64, max int) *chunkReader {
	return &chunkReader{data: data, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), max: max}
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := min(1+c.rng.IntN(c.max), len(p), len(c.data))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// decodeAll reads events until the first error, which it returns (io.EOF
// at a clean end).
func decodeAll[T Object](r io.Reader, opts DecoderOptions) ([]Event[T], error) {
	d := NewDecoder[T](r, opts)
	defer d.Close()
	var evs []Event[T]
	for {
		ev, err := d.Next()
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

// summary is an event in one comparable line.
func summary(ev Event[*testPod]) string {
	p := ev.Object
	return fmt.Sprintf("%s %s/%s rv=%s labels=%v containers=%d phase=%s", ev.Type, p.Namespace, p.Name,
		p.ResourceVersion, p.Labels, len(p.Spec.Containers), p.Status.Phase)
}

func summaries(evs []Event[*testPod]) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = summary(ev)
	}
	return out
}

// podEvent is a small synthetic event; pad adds an annotation of that
// many bytes so sizes vary.
func podEvent(typ EventType, i, pad int) string {
	return fmt.Sprintf(`{"type":%q,"object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"pod-%d",`+
		`"namespace":"ns-%d","resourceVersion":"%d","labels":{"i":"%d"},"annotations":{"pad":"%s"}},`+
		`"spec":{"containers":[{"name":"c","image":"img:{\"}"}]},"status":{"phase":"Running"}}}`,
		typ, i, i%7, 1000+i, i, strings.Repeat(`x\"{[`, pad/5))
}

// syntheticStream is n events of varying sizes, some above the initial
// buffer size so that the buffer grows and compacts.
func syntheticStream(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 1))
	var b strings.Builder
	types := []EventType{Added, Modified, Deleted, Bookmark}
	for i := range n {
		pad := rng.IntN(3000)
		if i%60 == 30 {
			pad = 70_000 + rng.IntN(100_000)
		}
		b.WriteString(podEvent(types[rng.IntN(len(types))], i, pad))
		b.WriteString([]string{"", "\n", " \r\n\t"}[rng.IntN(3)])
	}
	return []byte(b.String())
}

// errReader returns data and then err.
type errReader struct {
	data []byte
	err  error
}

func (r *errReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

var errBoom = errors.New("boom: connection reset")
