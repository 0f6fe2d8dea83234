// Command zilla plays Zilla's own scenario corpus with Sluice's spec
// runner, the held-out measure of Zilla compatibility.
//
// Given a checkout of aklivity/zilla (its specs/ and runtime/ trees), it
// plays, in pairs mode, every client.rpt against the server.rpt beside it
// peer to peer; in it mode, every test method of Zilla's integration tests
// (*IT.java) as Zilla's EngineRule and K3poRule would: the configuration of
// its @Configuration, the scripts of its @Specification under the rule's
// script roots, its @ScriptProperty overrides. It prints one line a
// scenario (PASS, FAIL with the first line of the failure, or SKIP with the
// reason) and the totals by folder.
//
//	go run ./bench/zilla -zilla /path/to/zilla -mode pairs -only binding-mcp
package main

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	_ "github.com/sluicehq/sluice/binding/all"
	"github.com/sluicehq/sluice/spec"
)

func main() {
	root := flag.String("zilla", "", "a checkout of aklivity/zilla (with specs/ and runtime/)")
	mode := flag.String("mode", "pairs", "pairs (peer to peer) or it (engine-driven, from *IT.java)")
	only := flag.String("only", "", "play only scenarios whose path matches this regexp")
	timeout := flag.Duration("timeout", 5*time.Second, "bound on each scenario")
	parallel := flag.Int("parallel", 4, "scenarios played at once")
	flag.Parse()
	if *root == "" {
		fmt.Fprintln(os.Stderr, "zilla: -zilla DIR is required")
		os.Exit(2)
	}
	var filter *regexp.Regexp
	if *only != "" {
		filter = regexp.MustCompile(*only)
	}
	var cases []scenario
	var err error
	switch *mode {
	case "pairs":
		cases, err = pairs(*root)
	case "it":
		cases, err = integrationTests(*root)
	default:
		err = fmt.Errorf("unknown mode %q: want pairs or it", *mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "zilla:", err)
		os.Exit(2)
	}
	kept := cases[:0]
	for _, c := range cases {
		if filter == nil || filter.MatchString(c.group+" "+c.name) {
			kept = append(kept, c)
		}
	}
	results := play(kept, *timeout, *parallel)
	report(os.Stdout, kept, results)
}

// scenario is one run: the scripts to play together and how.
type scenario struct {
	name    string // what the report names it by
	group   string // the folder or test class it is counted under
	scripts []string
	opts    []spec.RunOption
	config  string // empty for peer to peer
	skip    string // why it is not played, when it cannot be
}

// pairs lists every folder under specs/*/src/main/scripts holding both a
// client.rpt and a server.rpt.
func pairs(root string) ([]scenario, error) {
	var out []scenario
	base := filepath.Join(root, "specs")
	err := filepath.WalkDir(base, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "client.rpt" {
			return err
		}
		dir := filepath.Dir(path)
		if _, err := os.Stat(filepath.Join(dir, "server.rpt")); err != nil {
			return nil
		}
		rel, _ := filepath.Rel(base, dir)
		out = append(out, scenario{
			name:    rel,
			group:   pairGroup(rel),
			scripts: []string{filepath.Join(dir, "client.rpt"), filepath.Join(dir, "server.rpt")},
		})
		return nil
	})
	return out, err
}

// pairGroup counts a pair under its spec module and streams side, such as
// binding-mcp.spec network.
func pairGroup(rel string) string {
	parts := strings.Split(rel, string(filepath.Separator))
	group := parts[0]
	for i, p := range parts {
		if p == "streams" && i+1 < len(parts) {
			group += " " + parts[i+1]
			break
		}
	}
	return group
}

var (
	reScriptRoot = regexp.MustCompile(`addScriptRoot\(\s*"(\w+)"\s*,\s*"([^"]+)"\s*\)`)
	reConfigRoot = regexp.MustCompile(`configurationRoot\(\s*"([^"]+)"\s*\)`)
	reExternal   = regexp.MustCompile(`\.external\(\s*"([^"]+)"\s*\)`)
	reTest       = regexp.MustCompile(`(?s)@Test\b(.*?)public\s+void\s+(\w+)\s*\(\)[^{]*\{(.*?)\n    \}`)
	reConfigAnn  = regexp.MustCompile(`@Configuration\(\s*"([^"]+)"\s*\)`)
	reSpecAnn    = regexp.MustCompile(`(?s)@Specification\(\s*\{?(.*?)\}?\s*\)`)
	reString     = regexp.MustCompile(`"((?:[^"\\]|\\.)*)"`)
	reProperty   = regexp.MustCompile(`(?s)@ScriptProperty\(\s*\{?(.*?)\}?\s*\)`)
	reIgnore     = regexp.MustCompile(`@Ignore\b`)
	reConfigure  = regexp.MustCompile(`\.configure\(\s*([\w.]+)\s*,\s*([^\n]*?)\)\s*\n`)
	reConfAnn    = regexp.MustCompile(`(?s)@Configure\(\s*name\s*=\s*([\w.]+)\s*,\s*value\s*=\s*"([^"]*)"\s*\)`)
	reMethodRef  = regexp.MustCompile(`^"?(?:%s|[\w.]*?(\w+))::(\w+)"?(?:\.formatted\((\w+)\.class\.getName\(\)\))?$`)
)

// setting turns one EngineRule.configure or @Configure into a Sluice
// engine setting: the Java constant MCP_SESSION_ID_NAME names
// mcp.session.id, and a supplier method of a test class (Class::method)
// becomes the ids it returns, read from the class's source.
func setting(root, constant, value string) (string, string) {
	name := constant[strings.LastIndex(constant, ".")+1:]
	name = strings.ToLower(strings.ReplaceAll(strings.TrimSuffix(name, "_NAME"), "_", "."))
	value = strings.TrimSpace(value)
	if m := reMethodRef.FindStringSubmatch(value); m != nil {
		class := m[1]
		if class == "" {
			class = m[3]
		}
		if ids := supplied(root, class, m[2]); ids != "" {
			return name, ids
		}
	}
	return name, strings.Trim(value, `"`)
}

// supplied reads what a test class's static supplier method returns: a
// string literal, or the strings of the list it iterates.
func supplied(root, class, method string) string {
	matches, _ := filepath.Glob(filepath.Join(root, "runtime", "*", "src", "test", "java", "io", "aklivity", "zilla", "runtime", "binding", "*", "internal", "*", class+".java"))
	if len(matches) == 0 {
		return ""
	}
	src, err := os.ReadFile(matches[0])
	if err != nil {
		return ""
	}
	body := regexp.MustCompile(`(?s)static String ` + method + `\([^)]*\)\s*\{(.*?)\n    \}`).FindSubmatch(src)
	if body == nil {
		return ""
	}
	if lit := regexp.MustCompile(`return "([^"]*)";`).FindSubmatch(body[1]); lit != nil {
		return string(lit[1])
	}
	if list := regexp.MustCompile(`(?s)List<String> \w+ = List\.of\((.*?)\);`).FindSubmatch(src); list != nil {
		var ids []string
		for _, q := range reString.FindAllSubmatch(list[1], -1) {
			ids = append(ids, string(q[1]))
		}
		return strings.Join(ids, ",")
	}
	return ""
}

// integrationTests lists the test methods of every *IT.java under
// runtime/*/src/test.
func integrationTests(root string) ([]scenario, error) {
	var out []scenario
	err := filepath.WalkDir(filepath.Join(root, "runtime"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(d.Name(), "IT.java") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		tests, err := classTests(root, path, string(src))
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, tests...)
		return nil
	})
	return out, err
}

func classTests(root, path, src string) ([]scenario, error) {
	class := strings.TrimSuffix(filepath.Base(path), ".java")
	rel, _ := filepath.Rel(root, path)
	group := strings.Split(rel, string(filepath.Separator))[1] + " " + class
	if _, pkg, ok := strings.Cut(filepath.ToSlash(filepath.Dir(rel)), "/internal/"); ok {
		group = strings.Split(rel, string(filepath.Separator))[1] + " " + pkg + "/" + class
	}
	roots := map[string]string{}
	for _, m := range reScriptRoot.FindAllStringSubmatch(src, -1) {
		dir, err := specDir(root, m[2])
		if err != nil {
			return nil, err
		}
		roots[m[1]] = dir
	}
	var configRoot string
	if m := reConfigRoot.FindStringSubmatch(src); m != nil {
		dir, err := specDir(root, m[1])
		if err != nil {
			return nil, err
		}
		configRoot = dir
	}
	var externals []string
	for _, m := range reExternal.FindAllStringSubmatch(src, -1) {
		externals = append(externals, m[1])
	}
	var settings [][2]string
	for _, m := range reConfigure.FindAllStringSubmatch(src, -1) {
		n, v := setting(root, m[1], m[2])
		settings = append(settings, [2]string{n, v})
	}
	var out []scenario
	for _, m := range reTest.FindAllStringSubmatch(src, -1) {
		ann, method, body := m[1], m[2], m[3]
		sc := scenario{name: class + "." + method, group: group}
		if c := reConfigAnn.FindStringSubmatch(ann); c != nil {
			sc.config = filepath.Join(configRoot, c[1])
		}
		if s := reSpecAnn.FindStringSubmatch(ann); s != nil {
			for _, q := range reString.FindAllStringSubmatch(s[1], -1) {
				sc.scripts = append(sc.scripts, strings.NewReplacer("${", "", "}", "").Replace(q[1]))
			}
		}
		for alias, dir := range roots {
			sc.opts = append(sc.opts, spec.Root(alias, dir))
		}
		if p := reProperty.FindStringSubmatch(ann); p != nil {
			for _, q := range reString.FindAllStringSubmatch(p[1], -1) {
				name, value, ok := strings.Cut(strings.ReplaceAll(q[1], `\"`, `"`), " ")
				if !ok {
					continue
				}
				sc.opts = append(sc.opts, spec.Override(name, strings.Trim(strings.TrimSpace(value), `"`)))
			}
		}
		sc.opts = append(sc.opts, spec.External(externals...))
		own := map[string]string{}
		for _, c := range reConfAnn.FindAllStringSubmatch(ann, -1) {
			n, v := setting(root, c[1], c[2])
			own[n] = v
		}
		for _, kv := range settings {
			if _, ok := own[kv[0]]; !ok {
				sc.opts = append(sc.opts, spec.Setting(kv[0], kv[1]))
			}
		}
		for n, v := range own {
			sc.opts = append(sc.opts, spec.Setting(n, v))
		}
		switch {
		case reIgnore.MatchString(ann):
			sc.skip = "@Ignore"
		case sc.config == "" || len(sc.scripts) == 0:
			sc.skip = "no @Configuration or @Specification"
		case strings.Contains(body, "k3po.notifyBarrier") || strings.Contains(body, "k3po.awaitBarrier"):
			sc.skip = "the test body drives barriers from Java"
		case !onlyFinishes(body):
			sc.skip = "the test body does more than k3po.finish()"
		}
		out = append(out, sc)
	}
	return out, nil
}

// onlyFinishes reports whether a test body is k3po.finish() and nothing
// the runner would have to do on its own.
func onlyFinishes(body string) bool {
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line == "k3po.finish();" || strings.HasPrefix(line, "//") {
			continue
		}
		return false
	}
	return true
}

// specDir finds a script or config root, given as a class-path path, in
// one of the spec modules.
func specDir(root, classPath string) (string, error) {
	matches, _ := filepath.Glob(filepath.Join(root, "specs", "*", "src", "main", "scripts", classPath))
	if len(matches) == 0 {
		return "", fmt.Errorf("no spec module holds %s", classPath)
	}
	return matches[0], nil
}

// play runs the scenarios, parallel at once, and returns each one's
// outcome: "" for a pass, else the failure.
func play(cases []scenario, timeout time.Duration, parallel int) []string {
	results := make([]string, len(cases))
	sem := make(chan struct{}, max(parallel, 1))
	var wg sync.WaitGroup
	for i, c := range cases {
		if c.skip != "" {
			results[i] = "SKIP " + c.skip
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			opts := append([]spec.RunOption{spec.Timeout(timeout)}, c.opts...)
			setup := spec.PeerToPeer(opts...)
			if c.config != "" {
				setup = spec.Config(c.config, opts...)
			}
			ctx, cancel := context.WithTimeout(context.Background(), timeout+time.Second)
			defer cancel()
			if err := spec.Play(ctx, setup, c.scripts...); err != nil {
				results[i] = "FAIL " + firstLine(err.Error())
			}
		}()
	}
	wg.Wait()
	return results
}

func firstLine(s string) string {
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, ": ") && !strings.HasPrefix(line, "FAIL ") {
			return line
		}
	}
	s, _, _ = strings.Cut(s, "\n")
	return s
}

func report(w *os.File, cases []scenario, results []string) {
	type tally struct{ pass, fail, skip int }
	groups := map[string]*tally{}
	var total tally
	for i, c := range cases {
		t := groups[c.group]
		if t == nil {
			t = &tally{}
			groups[c.group] = t
		}
		switch r := results[i]; {
		case r == "":
			t.pass++
			total.pass++
			fmt.Fprintf(w, "PASS %s\n", c.name)
		case strings.HasPrefix(r, "SKIP"):
			t.skip++
			total.skip++
			fmt.Fprintf(w, "SKIP %s :: %s\n", c.name, strings.TrimPrefix(r, "SKIP "))
		default:
			t.fail++
			total.fail++
			fmt.Fprintf(w, "FAIL %s :: %s\n", c.name, strings.TrimPrefix(r, "FAIL "))
		}
	}
	names := make([]string, 0, len(groups))
	for g := range groups {
		names = append(names, g)
	}
	sort.Strings(names)
	fmt.Fprintln(w)
	for _, g := range names {
		t := groups[g]
		fmt.Fprintf(w, "%-60s pass %4d  fail %4d  skip %4d\n", g, t.pass, t.fail, t.skip)
	}
	fmt.Fprintf(w, "%-60s pass %4d  fail %4d  skip %4d\n", "total", total.pass, total.fail, total.skip)
}
