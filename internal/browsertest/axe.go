package browsertest

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// axeJS is axe-core (internal/browsertest/axe, MPL-2.0), injected into a
// page to check its accessibility.
//
//go:embed axe/axe.min.js
var axeJS string

// Axe runs axe-core on the current page and fails on serious or critical
// violations. DevTools evaluation is not subject to the page's CSP. A page
// state (the document and the viewport's width) that already passed in
// this test is not checked again, and axe is injected once per document.
//
// Only the rules that can find a serious or critical violation run
// (axeRulesJS). Colour contrast, about 80 % of axe's time, depends on the
// stylesheet and on the classes and inline style of a text's element and
// its ancestors (its class chain, chainedJS): it is checked on the texts and
// controls whose class chain (at this width and direction) no page of this
// test binary passed before (contrastSeen), and only on those.
func (b *Browser) Axe(page string) {
	b.T.Helper()
	var st struct {
		State  string   `json:"state"`
		Loaded bool     `json:"loaded"`
		Chains []string `json:"chains"`
	}
	b.Run("state of "+page, chromedp.Evaluate(`({state: innerWidth + " " + document.documentElement.outerHTML, loaded: typeof axe !== "undefined", chains: `+textChainsJS+`})`, &st))
	sum := sha256.Sum256([]byte(st.State))
	key := string(sum[:])
	if b.axed[key] {
		return
	}
	if !st.Loaded {
		b.Run("inject axe", chromedp.Evaluate(axeJS, nil))
	}
	newChains := contrastSeen.unseen(st.Chains)
	ctx, cancel := context.WithTimeout(b.Ctx, 30*time.Second)
	defer cancel()
	out, n, err := axeViolations(ctx, newChains)
	if err != nil {
		b.T.Fatalf("axe on %s: %v", page, err)
	}
	if n > 0 {
		b.T.Errorf("accessibility of %s: %s", page, out)
		return
	}
	contrastSeen.add(newChains)
	b.axed[key] = true
}

// axeViolations runs the injected axe on the tab's page and returns its
// serious and critical violations (JSON: id, impact, the nodes' HTML) and
// how many there are. Colour contrast is checked on the texts and controls
// under the class chains contrast names (chainedJS), and only there.
func axeViolations(ctx context.Context, contrast []string) (string, int, error) {
	chains, err := json.Marshal(contrast)
	if err != nil {
		return "", 0, err
	}
	var out string
	err = chromedp.Run(ctx, chromedp.Evaluate(`(async (contrast) => {
		const serious = r => r.violations.filter(v => v.impact === "serious" || v.impact === "critical").map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.map(n => n.html)}));
		const found = serious(await axe.run(document, {resultTypes: ["violations"], rules: `+axeRulesJS+`()}));
		const want = new Set(contrast), at = new Set(`+chainedJS+`().filter(([, c]) => want.has(c)).map(([e]) => e));
		if (at.size) found.push(...serious(await axe.run({include: [...at]}, {resultTypes: ["violations"], runOnly: {type: "rule", values: ["color-contrast"]}})));
		return JSON.stringify(found);
	})(`+string(chains)+`)`,
		&out, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	if err != nil {
		return "", 0, err
	}
	var v []json.RawMessage
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		return "", 0, fmt.Errorf("axe result: %v: %s", err, out)
	}
	return out, len(v), nil
}

// axeRulesJS is the rules option of axe.run over the whole page: off are
// the rules whose impact (the rule's or its checks', as axe declares them)
// is below serious, since only serious and critical violations fail a
// test (that halves a run; a rule whose impact axe does not declare stays
// on), and colour contrast, which runs apart on the texts it has to check
// (axeViolations).
const axeRulesJS = `(() => {
	const rank = {minor: 1, moderate: 2, serious: 3, critical: 4}, rules = {};
	for (const r of axe._audit.rules) {
		let top = rank[r.impact] || 0;
		for (const c of [...r.any, ...r.all, ...r.none]) {
			const check = axe._audit.checks[c.id || c];
			top = Math.max(top, rank[check && check.metadata && check.metadata.impact] || 0);
		}
		if (top > 0 && top < rank.serious) rules[r.id] = {enabled: false};
	}
	rules["color-contrast"] = {enabled: false};
	return rules;
})`

// textChainsJS is the class chains of the page's texts and controls
// (chainedJS).
const textChainsJS = `[...new Set(` + chainedJS + `().map(([, c]) => c))]`

// chainedJS is a function listing every element that shows a text and
// every form control of the page with its class chain: its tag, classes,
// inline style and whether it is disabled, and those of its ancestors,
// with the viewport's width and the document's direction, which decide
// the colours axe's contrast rule checks.
const chainedJS = `(() => {
	const prefix = innerWidth + " " + (document.documentElement.dir || "ltr"), out = [];
	const chain = e => { const c = [prefix]; for (; e && e !== document.documentElement; e = e.parentElement) {
		c.push(e.tagName + (typeof e.className === "string" && e.className.trim() ? "." + e.className.trim().split(/\s+/).sort().join(".") : "") +
			(e.getAttribute("style") ? "[" + e.getAttribute("style") + "]" : "") + (e.disabled ? ":disabled" : "")); }
		return c.join("<"); };
	const w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
	for (let n; (n = w.nextNode());) { if (n.nodeValue.trim()) out.push([n.parentElement, chain(n.parentElement)]); }
	document.querySelectorAll("input, select, textarea, button").forEach(e => out.push([e, chain(e)]));
	return out;
})`

// contrastSeen is the class chains (chainedJS) whose contrast a page of
// this test binary passed.
var contrastSeen = chainSet{m: map[string]bool{}}

type chainSet struct {
	mu sync.Mutex
	m  map[string]bool
}

func (s *chainSet) unseen(chains []string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, c := range chains {
		if !s.m[c] {
			out = append(out, c)
		}
	}
	return out
}

func (s *chainSet) add(chains []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range chains {
		s.m[c] = true
	}
}
