//! What a `bash` command would run, read with a real shell parser
//! (`brush-parser`): every simple command of the script, wherever it sits
//! (lists, pipelines, subshells, groups, loops, functions, `$(…)`,
//! backticks, process substitutions, expanding heredocs), as its argv with
//! quotes and escapes removed, and the files it redirects output to.
//!
//! A word whose value is only known when it runs (a parameter, a
//! substitution, a glob-free tilde) is [`Word::Dynamic`]: no rule word ever
//! equals it. Anything that cannot be read this way makes the script
//! *opaque* (with the reason): no rule can approve it, so it is asked.

use super::analysis::{Analysis, SimpleCommand, Word};
use super::wrappers::{Inner, unwrap};
use brush_parser::ParserOptions;
use brush_parser::ast::{
    self, AndOrList, Command as AstCommand, CommandPrefixOrSuffixItem, CompoundCommand,
    CompoundList, IoFileRedirectKind, IoFileRedirectTarget, IoRedirect, Pipeline,
};
use brush_parser::word::{self, WordPiece, WordPieceWithSource};

/// Nesting beyond this (`$(…$(…))`, `bash -c` in `bash -c`) is opaque.
const MAX_DEPTH: usize = 8;

/// Read `script` (the `bash` tool's command).
pub(crate) fn analyse(script: &str) -> Analysis {
    let mut analysis = Analysis::default();
    Walker {
        out: &mut analysis,
        options: ParserOptions::default(),
    }
    .script(script, 0);
    analysis
}

struct Walker<'a> {
    out: &'a mut Analysis,
    options: ParserOptions,
}

impl Walker<'_> {
    /// Parse and walk a whole script (the command, a substitution's body,
    /// `bash -c`'s argument).
    pub(super) fn script(&mut self, source: &str, depth: usize) {
        if depth > MAX_DEPTH {
            self.out.opaque("commands nested too deeply to read");
            return;
        }
        let mut parser = brush_parser::Parser::new(std::io::Cursor::new(source), &self.options);
        match parser.parse_program() {
            Ok(program) => {
                for list in &program.complete_commands {
                    self.list(list, depth);
                }
            }
            Err(e) => self.out.opaque(format!("the command does not parse: {e}")),
        }
    }

    fn list(&mut self, list: &CompoundList, depth: usize) {
        for item in &list.0 {
            self.and_or(&item.0, depth);
        }
    }

    fn and_or(&mut self, list: &AndOrList, depth: usize) {
        self.pipeline(&list.first, depth);
        for next in &list.additional {
            match next {
                ast::AndOr::And(p) | ast::AndOr::Or(p) => self.pipeline(p, depth),
            }
        }
    }

    fn pipeline(&mut self, pipeline: &Pipeline, depth: usize) {
        for command in &pipeline.seq {
            self.command(command, depth);
        }
    }

    fn command(&mut self, command: &AstCommand, depth: usize) {
        match command {
            AstCommand::Simple(simple) => self.simple(simple, depth),
            AstCommand::Compound(compound, redirects) => {
                let mut writes = Vec::new();
                for redirect in redirects.iter().flat_map(|r| &r.0) {
                    self.redirect(redirect, &mut writes, depth);
                }
                if !writes.is_empty() {
                    self.out.commands.push(SimpleCommand {
                        argv: Vec::new(),
                        writes,
                    });
                }
                self.compound(compound, depth);
            }
            AstCommand::Function(function) => {
                self.compound(&function.body.0, depth);
            }
            AstCommand::ExtendedTest(test, _) => self.extended_test(&test.expr, depth),
        }
    }

    fn compound(&mut self, compound: &CompoundCommand, depth: usize) {
        match compound {
            CompoundCommand::Arithmetic(a) => self.arithmetic(&a.expr.value, depth),
            CompoundCommand::ArithmeticForClause(a) => {
                for expr in [&a.initializer, &a.condition, &a.updater]
                    .into_iter()
                    .flatten()
                {
                    self.arithmetic(&expr.value, depth);
                }
                self.list(&a.body.list, depth);
            }
            CompoundCommand::BraceGroup(g) => self.list(&g.list, depth),
            CompoundCommand::Subshell(s) => self.list(&s.list, depth),
            CompoundCommand::ForClause(f) => {
                for value in f.values.iter().flatten() {
                    self.word(&value.value, depth);
                }
                self.list(&f.body.list, depth);
            }
            CompoundCommand::CaseClause(c) => {
                self.word(&c.value.value, depth);
                for case in &c.cases {
                    for pattern in &case.patterns {
                        self.word(&pattern.value, depth);
                    }
                    if let Some(list) = &case.cmd {
                        self.list(list, depth);
                    }
                }
            }
            CompoundCommand::IfClause(i) => {
                self.list(&i.condition, depth);
                self.list(&i.then, depth);
                for clause in i.elses.iter().flatten() {
                    if let Some(condition) = &clause.condition {
                        self.list(condition, depth);
                    }
                    self.list(&clause.body, depth);
                }
            }
            CompoundCommand::WhileClause(w) | CompoundCommand::UntilClause(w) => {
                self.list(&w.0, depth);
                self.list(&w.1.list, depth);
            }
            CompoundCommand::Coprocess(c) => self.command(&c.body, depth),
        }
    }

    fn extended_test(&mut self, expr: &ast::ExtendedTestExpr, depth: usize) {
        use ast::ExtendedTestExpr as E;
        match expr {
            E::And(a, b) | E::Or(a, b) => {
                self.extended_test(a, depth);
                self.extended_test(b, depth);
            }
            E::Not(a) | E::Parenthesized(a) => self.extended_test(a, depth),
            E::UnaryTest(_, w) => {
                self.word(&w.value, depth);
            }
            E::BinaryTest(_, a, b) => {
                self.word(&a.value, depth);
                self.word(&b.value, depth);
            }
        }
    }

    /// Arithmetic text can hold substitutions (`$(( $(cmd) + 1 ))`).
    fn arithmetic(&mut self, text: &str, depth: usize) {
        if text.contains("$(") || text.contains('`') {
            self.out
                .opaque("a command substitution inside arithmetic cannot be read");
        }
        let _ = depth;
    }

    fn simple(&mut self, simple: &ast::SimpleCommand, depth: usize) {
        let mut command = SimpleCommand::default();
        // The prefix: assignments (the command's environment) and redirects.
        for item in simple.prefix.iter().flat_map(|p| &p.0) {
            self.item(item, &mut command, true, depth);
        }
        if let Some(name) = &simple.word_or_name {
            command.argv.push(self.word(&name.value, depth));
        }
        for item in simple.suffix.iter().flat_map(|s| &s.0) {
            self.item(item, &mut command, false, depth);
        }
        self.push_unwrapped(command, depth);
    }

    fn item(
        &mut self,
        item: &CommandPrefixOrSuffixItem,
        command: &mut SimpleCommand,
        prefix: bool,
        depth: usize,
    ) {
        match item {
            CommandPrefixOrSuffixItem::IoRedirect(r) => {
                self.redirect(r, &mut command.writes, depth)
            }
            CommandPrefixOrSuffixItem::Word(w) => command.argv.push(self.word(&w.value, depth)),
            // `X=$(cmd) git status` runs `cmd`; before the name an assignment
            // only sets the command's environment, after it (`dd of=x`) it
            // is an argument like any other.
            CommandPrefixOrSuffixItem::AssignmentWord(_, w) => {
                let word = self.word(&w.value, depth);
                if !prefix {
                    command.argv.push(word);
                }
            }
            CommandPrefixOrSuffixItem::ProcessSubstitution(_, s) => {
                self.list(&s.list, depth);
                command.argv.push(Word::Dynamic("<(…)".into()));
            }
        }
    }

    /// Record a command, and what a wrapper (`env`, `xargs`, `bash -c`,
    /// `sudo`, …) runs in its stead.
    fn push_unwrapped(&mut self, command: SimpleCommand, depth: usize) {
        let writes = command.writes.clone();
        let inner = unwrap(&command.argv, self.out);
        match inner {
            Inner::None => self.out.commands.push(command),
            Inner::Command(argv) => self.push_unwrapped(SimpleCommand { argv, writes }, depth),
            Inner::Script(script) => {
                if !writes.is_empty() {
                    self.out.commands.push(SimpleCommand {
                        argv: Vec::new(),
                        writes,
                    });
                }
                self.script(&script, depth + 1);
            }
        }
    }

    fn redirect(&mut self, redirect: &IoRedirect, writes: &mut Vec<Word>, depth: usize) {
        match redirect {
            IoRedirect::File(_, kind, target) => match target {
                IoFileRedirectTarget::Filename(w) => {
                    let target = self.word(&w.value, depth);
                    if matches!(
                        kind,
                        IoFileRedirectKind::Write
                            | IoFileRedirectKind::Append
                            | IoFileRedirectKind::ReadAndWrite
                            | IoFileRedirectKind::Clobber
                    ) {
                        writes.push(target);
                    }
                }
                IoFileRedirectTarget::Fd(_) => {}
                IoFileRedirectTarget::Duplicate(w) => {
                    // `>&file` writes to a file unless it names a descriptor.
                    let target = self.word(&w.value, depth);
                    let is_fd = target
                        .as_static()
                        .is_some_and(|t| t == "-" || t.chars().all(|c| c.is_ascii_digit()));
                    if !is_fd && matches!(kind, IoFileRedirectKind::DuplicateOutput) {
                        writes.push(target);
                    }
                }
                IoFileRedirectTarget::ProcessSubstitution(_, s) => self.list(&s.list, depth),
            },
            IoRedirect::HereDocument(_, doc) => {
                if doc.requires_expansion {
                    match word::parse_heredoc(&doc.doc.value, &self.options) {
                        Ok(pieces) => {
                            self.pieces(&doc.doc.value, &pieces, depth);
                        }
                        Err(_) => self.out.opaque("a heredoc does not parse"),
                    }
                }
            }
            IoRedirect::HereString(_, w) => {
                self.word(&w.value, depth);
            }
            IoRedirect::OutputAndError(w, _) => {
                let target = self.word(&w.value, depth);
                writes.push(target);
            }
        }
    }

    /// One word after quote removal; the commands its substitutions run are
    /// recorded.
    pub(super) fn word(&mut self, raw: &str, depth: usize) -> Word {
        match word::parse(raw, &self.options) {
            Ok(pieces) => match self.pieces(raw, &pieces, depth) {
                Some(text) => Word::Static(text),
                None => Word::Dynamic(raw.to_owned()),
            },
            Err(_) => {
                self.out.opaque(format!("the word `{raw}` does not parse"));
                Word::Dynamic(raw.to_owned())
            }
        }
    }

    /// The static text of `pieces`, or `None` when part of it is only known
    /// when it runs.
    fn pieces(
        &mut self,
        raw: &str,
        pieces: &[WordPieceWithSource],
        depth: usize,
    ) -> Option<String> {
        let mut text = Some(String::new());
        for piece in pieces {
            let part = match &piece.piece {
                WordPiece::Text(s) | WordPiece::SingleQuotedText(s) => Some(s.clone()),
                WordPiece::EscapeSequence(s) => Some(s.strip_prefix('\\').unwrap_or(s).to_owned()),
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => self.pieces(raw, inner, depth),
                WordPiece::CommandSubstitution(body)
                | WordPiece::BackquotedCommandSubstitution(body) => {
                    self.script(body, depth + 1);
                    None
                }
                WordPiece::ParameterExpansion(_) => {
                    let source = raw.get(piece.start_index..piece.end_index).unwrap_or(raw);
                    if source.contains("$(") || source.contains('`') {
                        self.out.opaque(
                            "a command substitution inside a parameter expansion cannot be read",
                        );
                    }
                    None
                }
                WordPiece::ArithmeticExpression(expr) => {
                    self.arithmetic(&expr.value, depth);
                    None
                }
                // `$'\x72m'` can spell any name: never equal to a rule word.
                WordPiece::AnsiCQuotedText(_) | WordPiece::TildeExpansion(_) => None,
            };
            text = match (text, part) {
                (Some(mut t), Some(p)) => {
                    t.push_str(&p);
                    Some(t)
                }
                _ => None,
            };
        }
        text
    }
}
