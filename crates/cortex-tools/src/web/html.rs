//! HTML to readable Markdown, small and forgiving: headings, paragraphs,
//! lists, links as `[text](url)`, `pre` as fenced code, `code`, emphasis and
//! table rows as `|`-separated cells; scripts, styles, templates, SVG,
//! forms' widgets and the page's navigation and footer are dropped. No DOM
//! is built: one pass over the tags, so a hostile page costs linear time.

use reqwest::Url;

/// Elements whose whole content is dropped (found by their end tag, with
/// nested elements of the same name counted).
const DROPPED: &[&str] = &[
    "script", "style", "noscript", "template", "svg", "iframe", "nav", "footer", "select",
    "button", "canvas", "object", "head",
];

/// Elements that start and end a block (a blank line around them).
const BLOCKS: &[&str] = &[
    "p",
    "div",
    "section",
    "article",
    "main",
    "header",
    "blockquote",
    "table",
    "ul",
    "ol",
    "dl",
    "figure",
    "form",
    "details",
    "summary",
    "aside",
    "address",
    "fieldset",
    "center",
];

/// The page's `<title>` and its body as Markdown, and whether the
/// conversion stopped once the Markdown passed `max` bytes (the model is
/// shown less than that; converting the rest would only cost time).
pub(crate) fn to_markdown(html: &str, base: &Url, max: usize) -> (Option<String>, String, bool) {
    let mut md = Markdown::new(base);
    // Lower-cased once: the same byte offsets as `html`, searched for end
    // tags without allocating per element.
    let lower = html.to_ascii_lowercase();
    let title = title_of(html, &lower);
    let bytes = html.as_bytes();
    let mut i = 0;
    let mut stopped = false;
    while i < bytes.len() {
        if md.out.len() > max {
            stopped = true;
            break;
        }
        let Some(lt) = memchr::memchr(b'<', &bytes[i..]).map(|at| i + at) else {
            md.text(&html[i..]);
            break;
        };
        md.text(&html[i..lt]);
        i = lt;
        let rest = &html[i..];
        if let Some(comment) = rest.strip_prefix("<!--") {
            i += 4 + comment.find("-->").map_or(comment.len(), |end| end + 3);
            continue;
        }
        if tag_end(rest).is_none() {
            // No `>` is left: nothing more is a tag (and looking again at
            // every `<` would cost the rest of the page each time).
            md.text(rest);
            break;
        }
        let Some(tag) = Tag::read(rest) else {
            md.text("<");
            i += 1;
            continue;
        };
        i += tag.len;
        if !tag.end && DROPPED.contains(&tag.name.as_str()) {
            i += skip_element(&lower[i..], &tag.name);
            continue;
        }
        md.tag(&tag);
    }
    (title, md.finish(), stopped)
}

/// One tag: its lower-case name, whether it is an end tag, its `href`, its
/// length in the input.
struct Tag {
    name: String,
    end: bool,
    href: Option<String>,
    len: usize,
}

impl Tag {
    /// The tag at the start of `text` (which starts with `<`); `None` when
    /// it is no tag (`a < b`), `<!DOCTYPE …>` and `<?…>` read as a tag
    /// without a name.
    fn read(text: &str) -> Option<Tag> {
        let body = &text[1..];
        let end = body.starts_with('/');
        let after = if end { &body[1..] } else { body };
        let first = after.chars().next()?;
        if !(first.is_ascii_alphabetic() || (!end && (first == '!' || first == '?'))) {
            return None;
        }
        let close = tag_end(text)?;
        let inner = &text[1..close];
        let name: String = after
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        let href = (!end && name == "a")
            .then(|| attribute(inner, "href"))
            .flatten();
        Some(Tag {
            name,
            end,
            href,
            len: close + 1,
        })
    }
}

/// Where the `>` that closes the tag at the start of `text` is: the first
/// one, quotes not respected, so every byte is looked at once (a `>` inside
/// an attribute's value costs that tag's attributes, never the text).
fn tag_end(text: &str) -> Option<usize> {
    memchr::memchr(b'>', text.as_bytes())
}

/// The value of attribute `name` in a tag's inside text, entities decoded.
fn attribute(inner: &str, name: &str) -> Option<String> {
    let lower = inner.to_ascii_lowercase();
    let mut from = 0;
    while let Some(at) = lower[from..].find(name).map(|at| from + at) {
        from = at + name.len();
        let before = lower[..at].chars().next_back();
        if !before.is_some_and(char::is_whitespace) {
            continue;
        }
        let rest = inner[from..].trim_start();
        let Some(rest) = rest.strip_prefix('=') else {
            continue;
        };
        let rest = rest.trim_start();
        let value = match rest.chars().next() {
            Some(q @ ('"' | '\'')) => rest[1..].split(q).next().unwrap_or_default(),
            _ => rest
                .split(|c: char| c.is_whitespace() || c == '>')
                .next()
                .unwrap_or_default(),
        };
        return Some(decode_entities(value).trim().to_owned());
    }
    None
}

/// How many bytes of `lower` (the lower-cased text just after `<name …>`)
/// belong to the element, its end tag included; all of it when the end tag
/// is missing.
fn skip_element(lower: &str, name: &str) -> usize {
    let open = format!("<{name}");
    let close = format!("</{name}");
    let mut depth = 1usize;
    let mut at = 0;
    while let Some(next) = lower[at..].find('<').map(|n| at + n) {
        let here = &lower[next..];
        let boundary = |len: usize| {
            here[len..]
                .chars()
                .next()
                .is_none_or(|c| !c.is_ascii_alphanumeric())
        };
        if here.starts_with(&close) && boundary(close.len()) {
            depth -= 1;
            if depth == 0 {
                return next + here.find('>').map_or(here.len(), |end| end + 1);
            }
        } else if here.starts_with(&open) && boundary(open.len()) && !raw_text(name) {
            depth += 1;
        }
        at = next + 1;
    }
    lower.len()
}

/// Elements whose content is text, never tags (`<script>` holding `"<script>"`).
fn raw_text(name: &str) -> bool {
    matches!(name, "script" | "style" | "textarea" | "title")
}

fn title_of(html: &str, lower: &str) -> Option<String> {
    let start = lower.find("<title")?;
    let open_end = start + lower[start..].find('>')? + 1;
    let end = open_end + lower[open_end..].find("</title")?;
    let title = collapse(&decode_entities(&html[open_end..end]));
    (!title.is_empty()).then_some(title)
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The Markdown being written, with what the open tags decided.
struct Markdown<'a> {
    base: &'a Url,
    out: String,
    pre: usize,
    lists: Vec<Option<u32>>,
    /// Open links: where their text starts in `out`, and their target.
    links: Vec<(usize, Option<String>)>,
    /// Whitespace seen since the last text, not written yet.
    space: bool,
}

impl<'a> Markdown<'a> {
    fn new(base: &'a Url) -> Self {
        Markdown {
            base,
            out: String::new(),
            pre: 0,
            lists: Vec::new(),
            links: Vec::new(),
            space: false,
        }
    }

    fn text(&mut self, raw: &str) {
        if raw.is_empty() {
            return;
        }
        let text = decode_entities(raw);
        if self.pre > 0 {
            self.out.push_str(&text);
            return;
        }
        for (n, word) in text.split_whitespace().enumerate() {
            let before = n > 0 || text.starts_with(char::is_whitespace) || self.space;
            if before && !self.at_line_start() {
                self.out.push(' ');
            }
            self.out.push_str(word);
            self.space = false;
        }
        if text.ends_with(char::is_whitespace) {
            self.space = true;
        }
    }

    fn at_line_start(&self) -> bool {
        self.out.is_empty()
            || self.out.ends_with('\n')
            || self.out.ends_with("# ")
            // A list item's marker (`- `, `12. `): no space after it.
            || self.last_line().is_some_and(|line| {
                let marker = line.trim_start();
                marker == "- "
                    || marker.strip_suffix(". ").is_some_and(|n| {
                        !n.is_empty() && n.chars().all(|c| c.is_ascii_digit())
                    })
            })
    }

    /// The last line written, when it is short: a marker's line always is,
    /// and looking no further than 64 bytes back keeps a page written as
    /// one long line linear.
    fn last_line(&self) -> Option<&str> {
        let mut start = self.out.len().saturating_sub(64);
        while !self.out.is_char_boundary(start) {
            start += 1;
        }
        let tail = &self.out[start..];
        match tail.rfind('\n') {
            Some(at) => Some(&tail[at + 1..]),
            None if start == 0 => Some(tail),
            None => None,
        }
    }

    fn newlines(&mut self, count: usize) {
        self.space = false;
        if self.out.is_empty() {
            return;
        }
        while self.out.ends_with(' ') {
            self.out.pop();
        }
        let have = self.out.len() - self.out.trim_end_matches('\n').len();
        for _ in have..count {
            self.out.push('\n');
        }
    }

    fn inline(&mut self, mark: &str) {
        if self.pre == 0 {
            if self.space && !self.at_line_start() {
                self.out.push(' ');
                self.space = false;
            }
            self.out.push_str(mark);
        }
    }

    fn tag(&mut self, tag: &Tag) {
        let name = tag.name.as_str();
        match (name, tag.end) {
            ("br", _) => self.newlines(1),
            ("hr", _) => {
                self.newlines(2);
                self.out.push_str("---");
                self.newlines(2);
            }
            (h, false) if heading_level(h).is_some() => {
                self.newlines(2);
                let level = heading_level(h).unwrap_or(1);
                self.out.push_str(&"#".repeat(level));
                self.out.push(' ');
            }
            (h, true) if heading_level(h).is_some() => self.newlines(2),
            ("pre", false) => {
                self.newlines(2);
                self.out.push_str("```\n");
                self.pre += 1;
            }
            ("pre", true) if self.pre > 0 => {
                self.pre -= 1;
                if !self.out.ends_with('\n') {
                    self.out.push('\n');
                }
                self.out.push_str("```");
                self.newlines(2);
            }
            ("code" | "kbd" | "samp" | "tt", _) => self.inline("`"),
            ("strong" | "b", _) => self.inline("**"),
            ("em" | "i", _) => self.inline("_"),
            ("ul", false) => {
                self.list_gap();
                self.lists.push(None);
            }
            ("ol", false) => {
                self.list_gap();
                self.lists.push(Some(0));
            }
            ("ul" | "ol", true) => {
                self.lists.pop();
                self.newlines(if self.lists.is_empty() { 2 } else { 1 });
            }
            ("li", false) => {
                self.newlines(1);
                let depth = self.lists.len().max(1) - 1;
                self.out.push_str(&"  ".repeat(depth));
                match self.lists.last_mut() {
                    Some(Some(n)) => {
                        *n += 1;
                        let n = *n;
                        self.out.push_str(&format!("{n}. "));
                    }
                    _ => self.out.push_str("- "),
                }
            }
            ("li", true) => self.newlines(1),
            ("tr", true) | ("dt" | "dd", _) => self.newlines(1),
            ("td" | "th", false) => {
                if !self.at_line_start() {
                    self.out.push_str(" | ");
                }
                self.space = false;
            }
            ("a", false) => {
                self.inline("");
                self.links.push((self.out.len(), tag.href.clone()));
            }
            ("a", true) => self.close_link(),
            (block, _) if BLOCKS.contains(&block) => self.newlines(2),
            _ => {}
        }
    }

    /// A list inside a list item starts on the next line; any other list
    /// after a blank line.
    fn list_gap(&mut self) {
        self.newlines(if self.lists.is_empty() { 2 } else { 1 });
    }

    fn close_link(&mut self) {
        let Some((start, href)) = self.links.pop() else {
            return;
        };
        let start = start.min(self.out.len());
        let text = self.out[start..].trim().to_owned();
        let Some(target) = href.and_then(|href| self.link_target(&href)) else {
            return;
        };
        if text.is_empty() || text.contains('\n') {
            return;
        }
        self.out.truncate(start);
        self.out.push_str(&format!("[{text}]({target})"));
    }

    /// An absolute http(s) URL for `href`; `None` for a fragment of this
    /// page, `javascript:` and the like.
    fn link_target(&self, href: &str) -> Option<String> {
        if href.is_empty() || href.starts_with('#') {
            return None;
        }
        let url = self.base.join(href).ok()?;
        matches!(url.scheme(), "http" | "https").then(|| url.to_string())
    }

    fn finish(mut self) -> String {
        while self.pre > 0 {
            self.tag(&Tag {
                name: "pre".into(),
                end: true,
                href: None,
                len: 0,
            });
        }
        let mut out = String::with_capacity(self.out.len());
        let mut blank = 0;
        for line in self.out.lines() {
            let line = line.trim_end();
            if line.is_empty() {
                blank += 1;
                if blank > 1 {
                    continue;
                }
            } else {
                blank = 0;
            }
            out.push_str(line);
            out.push('\n');
        }
        out.trim().to_owned()
    }
}

fn heading_level(name: &str) -> Option<usize> {
    let digit = name.strip_prefix('h')?;
    match digit.parse::<usize>() {
        Ok(level @ 1..=6) => Some(level),
        _ => None,
    }
}

/// `&amp;`, `&#39;`, `&#x27;` and the common named entities; anything else
/// is left as written.
pub(crate) fn decode_entities(text: &str) -> String {
    if !text.contains('&') {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let end = rest[1..].find(';').map(|e| e + 1).filter(|&e| e <= 10);
        let decoded = end.and_then(|end| entity(&rest[1..end]).map(|c| (c, end)));
        match decoded {
            Some((c, end)) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn entity(name: &str) -> Option<char> {
    if let Some(number) = name.strip_prefix('#') {
        let code = match number.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => number.parse().ok()?,
        };
        return char::from_u32(code).filter(|c| *c != '\0');
    }
    Some(match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" => ' ',
        "mdash" => '—',
        "ndash" => '–',
        "hellip" => '…',
        "copy" => '©',
        "reg" => '®',
        "trade" => '™',
        "laquo" => '«',
        "raquo" => '»',
        "lsquo" => '‘',
        "rsquo" => '’',
        "ldquo" => '“',
        "rdquo" => '”',
        "middot" => '·',
        "bull" => '•',
        "times" => '×',
        "rarr" => '→',
        "larr" => '←',
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn convert(html: &str) -> (Option<String>, String) {
        let base = Url::parse("https://docs.example/guide/intro.html").expect("url");
        let (title, md, stopped) = to_markdown(html, &base, usize::MAX);
        assert!(!stopped);
        (title, md)
    }

    #[test]
    fn headings_paragraphs_links_lists_and_code_become_markdown() {
        let html = r##"<!DOCTYPE html><html><head><title>The &amp; Guide</title>
            <style>body { color: red }</style><script>var x = "<p>no</p>";</script></head>
            <body><nav><a href="/">Home</a></nav>
            <h1>Intro</h1><p>Read   the <a href="../api/index.html">API <b>docs</b></a>
            and <a href="#top">this</a>.</p>
            <ul><li>one</li><li>two <code>x &lt; y</code></li></ul>
            <ol><li>first</li><li>second</li></ol>
            <pre><code>fn main() {
    println!("&lt;hi&gt;");
}</code></pre>
            <table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>
            <!-- a <p>comment</p> --><footer>© someone</footer></body></html>"##;
        let (title, md) = convert(html);
        assert_eq!(title.as_deref(), Some("The & Guide"));
        assert_eq!(
            md,
            "# Intro\n\nRead the [API **docs**](https://docs.example/api/index.html) and this.\n\n\
             - one\n- two `x < y`\n\n1. first\n2. second\n\n\
             ```\nfn main() {\n    println!(\"<hi>\");\n}\n```\n\na | b\n1 | 2"
        );
        for gone in ["color", "var x", "Home", "comment", "someone"] {
            assert!(!md.contains(gone), "{gone} in {md}");
        }
    }

    #[test]
    fn broken_markup_and_hostile_links_do_not_break_the_text() {
        let (_, md) =
            convert("a < b and <a href=\"javascript:alert(1)\">click</a> <p>unclosed <script>x");
        assert_eq!(md, "a < b and click\n\nunclosed");
        let (_, md) = convert("<div><div><p>deep &#x41;&#66;&bogus; &amp</p></div></div>");
        assert_eq!(md, "deep AB&bogus; &amp");
    }

    #[test]
    fn a_long_one_line_page_converts_and_a_long_one_stops_past_the_limit() {
        let base = Url::parse("https://docs.example/").expect("url");
        // One line of sentences with links whose text starts with a space:
        // each once made the converter look back over the whole line.
        let html = format!(
            "<p>{}</p><ol><li>x</li></ol>",
            "Word. <a href=\"/x\"> y</a> ".repeat(100_000)
        );
        let (_, md, stopped) = to_markdown(&html, &base, usize::MAX);
        assert!(
            !stopped && md.ends_with("Word. [y](https://docs.example/x)\n\n1. x"),
            "{}",
            &md[md.len() - 20..]
        );
        let pieces = "<p>one more paragraph</p>".repeat(10_000);
        let (_, md, stopped) = to_markdown(&pieces, &base, 1000);
        assert!(stopped && md.len() < 1100, "{}", md.len());
    }

    #[test]
    fn nested_lists_are_indented() {
        let (_, md) = convert("<ul><li>a<ul><li>b</li></ul></li><li>c</li></ul>");
        assert_eq!(md, "- a\n  - b\n- c");
    }
}
