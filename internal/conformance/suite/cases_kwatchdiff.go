package suite

import (
	"net/http"
	"regexp"
	"sort"
	"strings"

	"github.com/stretchr/testify/require"
)

// testKwatchDiff runs "kwatch deploy -w --diff" while a deployment is
// scaled and its image changed: the field lines printed under the MODIFIED
// rows name exactly spec.replicas and the web container's image among the
// spec fields (the generation bumps and resourceVersions left out), each
// with its old and new value.
func testKwatchDiff(t T, e *Env) {
	mustCall(t, e, http.MethodPost, deployPath(e, ""), nil, ctJSON, jsonBody(t, deployment("web", 3, "web", "sidecar")))
	kw := buildKwatch(t, e)
	lines := kw.start(t, e, "get", "deployments", "-n", e.NS, "--diff")
	next := func(what string) string {
		select {
		case l, ok := <-lines:
			require.True(t, ok, "%s: kwatch's output ended", what)
			return l
		case <-e.Ctx.Done():
			require.FailNow(t, what+": no line in time")
			return ""
		}
	}
	require.Regexp(t, `^NAME +READY +UP-TO-DATE +AVAILABLE +AGE$`, next("header"))
	require.Regexp(t, `^web +`, next("initial row"))

	mustCall(t, e, http.MethodPatch, deployPath(e, "web"), nil, ctMerge, []byte(`{"spec":{"replicas":5}}`))
	mustCall(t, e, http.MethodPatch, deployPath(e, "web"), nil, ctStrategic,
		[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"registry.invalid/web:2"}]}}}}`))
	want := map[string]string{
		"spec.replicas": "3 → 5",
		"spec.template.spec.containers[name=web].image": "registry.invalid/web:1 → registry.invalid/web:2",
	}
	field := regexp.MustCompile(`^    ([^:]+): (.*)$`)
	got := map[string]string{}
	var all []string
	for !(got["spec.replicas"] != "" && got["spec.template.spec.containers[name=web].image"] != "") {
		l := next("the changed fields")
		all = append(all, l)
		m := field.FindStringSubmatch(l)
		switch {
		case m == nil:
			require.Regexp(t, `^web +`, l, "a MODIFIED row or a field line; so far:\n%s", strings.Join(all, "\n"))
		case strings.HasPrefix(m[1], "spec."):
			require.NotContains(t, got, m[1], "each spec field once; so far:\n%s", strings.Join(all, "\n"))
			got[m[1]] = m[2]
		default:
			require.NotRegexp(t, `^metadata\.(resourceVersion|generation|managedFields)`, m[1], "noise is left out")
		}
	}
	t.Logf("kwatch deployments -w --diff:\n%s", strings.Join(all, "\n"))
	keys := make([]string, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	require.Equal(t, want, got, "the spec fields printed: %v", keys)
}
