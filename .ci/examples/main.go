// Command examples checks that every runnable Example in the godoc compiles
// in a module outside this one, as a user who copies it would build it
// (make test runs it). For each public package (no internal/ in its path,
// not a command, not under examples/) it takes the Example functions of the
// package's external test files and every top-level declaration they use
// from those files (helper types, functions, methods), writes them as an
// ordinary package of a scratch module in a temporary directory, and runs
// go vet there. The scratch module requires this module (and the adapter
// modules named by -modules) through replace directives to the checkout,
// with their own requirements and go.sum, and builds offline from the
// module cache (GOPROXY=off): an Example that reaches into internal/, or
// into a helper that does, fails here with the compiler's message.
//
//	go run ./.ci/examples [-modules 'metrics/prometheus ...'] [-keep]
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	modules := flag.String("modules", "", "nested modules (directories, separated by spaces or commas) whose Examples are checked too")
	keep := flag.Bool("keep", false, "keep the scratch module and print its directory")
	flag.Parse()
	dirs := append([]string{"."}, strings.FieldsFunc(*modules, func(r rune) bool { return r == ',' || r == ' ' })...)
	if err := run(dirs, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "examples:", err)
		os.Exit(1)
	}
}

// module is one module whose Examples are copied.
type module struct {
	Dir  string // absolute
	Path string
	Go   string
	Req  []require
}

type require struct{ Path, Version string }

func run(dirs []string, keep bool) error {
	scratch, err := os.MkdirTemp("", "kwatch-examples-")
	if err != nil {
		return err
	}
	if keep {
		fmt.Println("scratch module:", scratch)
	} else {
		defer os.RemoveAll(scratch)
	}
	var mods []module
	var sums bytes.Buffer
	n := 0
	for _, d := range dirs {
		m, err := readModule(d)
		if err != nil {
			return err
		}
		mods = append(mods, m)
		sum, err := os.ReadFile(filepath.Join(m.Dir, "go.sum"))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		sums.Write(sum)
		c, err := copyExamples(m, filepath.Join(scratch, filepath.FromSlash(m.Path)))
		if err != nil {
			return err
		}
		n += c
	}
	if n == 0 {
		return errors.New("no Example found: the check would pass vacuously")
	}
	if err := os.WriteFile(filepath.Join(scratch, "go.mod"), goMod(mods), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(scratch, "go.sum"), sums.Bytes(), 0o644); err != nil {
		return err
	}
	cmd := exec.Command("go", "vet", "./...")
	cmd.Dir = scratch
	// Offline, from the module cache the checkout's own build filled; -mod=mod
	// lets go complete go.sum from it.
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("the Examples do not build outside the module (go vet in %s):\n%s", scratch, out)
	}
	fmt.Printf("examples: %d Examples of %d module(s) build in a module of their own\n", n, len(mods))
	return nil
}

func readModule(dir string) (module, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return module{}, err
	}
	out, err := goCmd(abs, "mod", "edit", "-json")
	if err != nil {
		return module{}, err
	}
	var mf struct {
		Module  struct{ Path string }
		Go      string
		Require []require
	}
	if err := json.Unmarshal(out, &mf); err != nil {
		return module{}, fmt.Errorf("%s/go.mod: %w", dir, err)
	}
	return module{Dir: abs, Path: mf.Module.Path, Go: mf.Go, Req: mf.Require}, nil
}

// goMod requires every module checked (replaced by its checkout) and the
// requirements of each, at the highest version any of them names.
func goMod(mods []module) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "module kwatch.example/godoc\n\ngo %s\n\nrequire (\n", mods[0].Go)
	local := map[string]bool{}
	for _, m := range mods {
		local[m.Path] = true
		fmt.Fprintf(&b, "\t%s v0.0.0\n", m.Path)
	}
	versions := map[string]string{}
	for _, m := range mods {
		for _, r := range m.Req {
			if !local[r.Path] && semverLess(versions[r.Path], r.Version) {
				versions[r.Path] = r.Version
			}
		}
	}
	paths := make([]string, 0, len(versions))
	for p := range versions {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		fmt.Fprintf(&b, "\t%s %s\n", p, versions[p])
	}
	b.WriteString(")\n\n")
	for _, m := range mods {
		fmt.Fprintf(&b, "replace %s => %s\n", m.Path, m.Dir)
	}
	return b.Bytes()
}

// semverLess orders two versions well enough for picking the higher of
// two requirements ("" is lowest); go resolves the rest itself.
func semverLess(a, b string) bool {
	if a == "" {
		return true
	}
	pa, pb := strings.FieldsFunc(a, isSep), strings.FieldsFunc(b, isSep)
	for i := 0; i < len(pa) && i < len(pb); i++ {
		if pa[i] == pb[i] {
			continue
		}
		var na, nb int
		_, ea := fmt.Sscan(pa[i], &na)
		_, eb := fmt.Sscan(pb[i], &nb)
		if ea == nil && eb == nil {
			return na < nb
		}
		return pa[i] < pb[i]
	}
	return len(pa) < len(pb)
}

func isSep(r rune) bool { return r == 'v' || r == '.' || r == '-' || r == '+' }

func goCmd(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, stderr.Bytes())
	}
	return out, nil
}

// pkg is what go list says of a package.
type pkg struct {
	ImportPath   string
	Name         string
	Dir          string
	XTestGoFiles []string
}

// copyExamples writes the Examples of m's public packages under dst and
// returns how many it wrote.
func copyExamples(m module, dst string) (int, error) {
	out, err := goCmd(m.Dir, "list", "-json=ImportPath,Name,Dir,XTestGoFiles", "./...")
	if err != nil {
		return 0, err
	}
	names, err := packageNames(m.Dir)
	if err != nil {
		return 0, err
	}
	n := 0
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			return 0, err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, m.Path), "/")
		if !public(rel, p.Name) || len(p.XTestGoFiles) == 0 {
			continue
		}
		src, count, err := extract(p, names)
		if err != nil {
			return 0, err
		}
		if count == 0 {
			continue
		}
		dir := filepath.Join(dst, filepath.FromSlash(rel))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return 0, err
		}
		if err := os.WriteFile(filepath.Join(dir, "examples.go"), src, 0o644); err != nil {
			return 0, err
		}
		n += count
	}
	return n, nil
}

// public reports whether a package (by its path inside the module) is one
// whose godoc users read: not internal, not a command, not an example program.
func public(rel, name string) bool {
	if name == "main" || rel == "examples" || strings.HasPrefix(rel, "examples/") {
		return false
	}
	for _, seg := range strings.Split(rel, "/") {
		if seg == "internal" {
			return false
		}
	}
	return true
}

// packageNames maps every import path the module's packages and tests use
// to its package name, for imports written without a name.
func packageNames(dir string) (map[string]string, error) {
	out, err := goCmd(dir, "list", "-deps", "-test", "-f", "{{.ImportPath}} {{.Name}}", "./...")
	if err != nil {
		return nil, err
	}
	names := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		// "path name", or "path [path.test] name" for a test variant.
		if f := strings.Fields(line); len(f) >= 2 {
			names[f[0]] = f[len(f)-1]
		}
	}
	return names, nil
}
