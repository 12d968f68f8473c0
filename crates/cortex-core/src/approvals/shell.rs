//! What a `bash` command would run, read with a real shell parser
//! (`brush-parser`): every simple command of the script, wherever it sits
//! (lists, pipelines, subshells, groups, loops, functions, `$(…)`,
//! backticks, process substitutions, expanding heredocs), as its argv with
//! quotes and escapes removed, and the files it redirects output to.
//!
//! A word whose value is only known when it runs (a parameter, a
//! substitution, a tilde, a glob, a brace expansion) is [`Word::Dynamic`]:
//! no rule word ever equals it. Anything that cannot be read this way makes
//! the script *opaque* (with the reason): no rule can approve it, so it is
//! asked (and refused under `deny`). The reader fails closed: whatever
//! changes what a later name runs (an assignment, a function, `alias`,
//! `trap`, `exec`, …) or makes bash evaluate data as code (arithmetic,
//! subscripts, `${x@P}`, `${!x}`) is opaque, since its effect depends on
//! values the reader cannot see.

use super::analysis::{Analysis, SimpleCommand, Word};
use super::expansion::{expands, parameter};
use super::wrappers::{Inner, unwrap};
use brush_parser::ParserOptions;
use brush_parser::ast::{
    self, AndOrList, Command as AstCommand, CommandPrefixOrSuffixItem, CompoundCommand,
    CompoundList, IoFileRedirectKind, IoFileRedirectTarget, IoRedirect, Pipeline,
};
use brush_parser::word::{self, WordPiece, WordPieceWithSource};

/// Nesting beyond this (`$(…$(…))`, `bash -c` in `bash -c`) is opaque.
const MAX_DEPTH: usize = 8;

/// Builtins that change what later commands are or run with (variables,
/// functions, aliases, traps, options, the command hash), or run text as
/// code: no rule covers them, whatever rule names them.
const STATE_BUILTINS: &[&str] = &[
    "alias",
    "bind",
    "declare",
    "enable",
    "export",
    "fc",
    "getopts",
    "hash",
    "let",
    "local",
    "mapfile",
    "read",
    "readarray",
    "readonly",
    "set",
    "shopt",
    "trap",
    "typeset",
    "unalias",
    "unset",
];

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
                        wrapped: false,
                    });
                }
                self.compound(compound, depth);
            }
            // Walked for the deny list; opaque because the name it defines
            // may shadow a command a rule covers (`echo() { …; }; echo`).
            AstCommand::Function(function) => {
                self.out
                    .opaque("a function definition changes what a name runs");
                self.compound(&function.body.0, depth);
            }
            AstCommand::ExtendedTest(test, _) => self.extended_test(&test.expr, depth),
        }
    }

    fn compound(&mut self, compound: &CompoundCommand, depth: usize) {
        match compound {
            CompoundCommand::Arithmetic(a) => self.arithmetic(&a.expr.value, depth),
            CompoundCommand::ArithmeticForClause(a) => {
                self.out
                    .opaque("an arithmetic `for` loop evaluates and assigns variables");
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
                // The loop variable is an assignment (`for PATH in /tmp`).
                self.out.opaque(format!(
                    "the `for` loop assigns the variable `{}`",
                    f.variable_name
                ));
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
            // A coprocess assigns its name's array and runs concurrently.
            CompoundCommand::Coprocess(c) => {
                self.out.opaque("a coprocess assigns variables");
                self.command(&c.body, depth)
            }
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
            E::UnaryTest(op, w) => {
                use ast::UnaryPredicate as U;
                // `-v 'a[$(cmd)]'` evaluates the subscript.
                if matches!(
                    op,
                    U::ShellVariableIsSetAndAssigned | U::ShellVariableIsSetAndNameRef
                ) {
                    self.out
                        .opaque("`[[ -v ]]` evaluates a variable name's subscript");
                }
                self.word(&w.value, depth);
            }
            E::BinaryTest(op, a, b) => {
                use ast::BinaryPredicate as B;
                // `[[ $x -eq 1 ]]` evaluates `$x`'s value as arithmetic,
                // which can run commands (`a[$(cmd)]`).
                if matches!(
                    op,
                    B::ArithmeticEqualTo
                        | B::ArithmeticNotEqualTo
                        | B::ArithmeticLessThan
                        | B::ArithmeticLessThanOrEqualTo
                        | B::ArithmeticGreaterThan
                        | B::ArithmeticGreaterThanOrEqualTo
                ) {
                    self.out
                        .opaque("an arithmetic comparison in `[[ ]]` evaluates its operands");
                }
                self.word(&a.value, depth);
                self.word(&b.value, depth);
            }
        }
    }

    /// Arithmetic evaluates the values of the variables it names as
    /// arithmetic again, subscripts included: `x='a[$(cmd)]'; (( x ))` runs
    /// `cmd`. Whatever the text, it is opaque.
    fn arithmetic(&mut self, text: &str, depth: usize) {
        let _ = (text, depth);
        self.out
            .opaque("arithmetic evaluates variables' values as code");
    }

    fn simple(&mut self, simple: &ast::SimpleCommand, depth: usize) {
        let mut command = SimpleCommand::default();
        if simple.word_or_name.is_none() {
            // `> file`, `x=1`: bash runs nothing a rule could name, yet it
            // truncates a file or changes what later commands run.
            self.out
                .opaque("a redirection or assignment with no command");
        }
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
            CommandPrefixOrSuffixItem::AssignmentWord(assignment, w) => {
                let word = self.word(&w.value, depth);
                if prefix {
                    // Any variable may change what runs (`PATH`, `BASH_ENV`,
                    // `GIT_*`, `LD_*`, `IFS`, …): none is taken as inert.
                    self.out.opaque(format!(
                        "`{}=…` changes the environment of what runs",
                        assignment.name
                    ));
                } else {
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
        self.builtin_effects(&command.argv);
        let writes = command.writes.clone();
        let inner = unwrap(&command.argv, self.out);
        match inner {
            Inner::None => self.out.commands.push(command),
            Inner::Command(argv) => self.push_unwrapped(
                SimpleCommand {
                    argv,
                    writes,
                    wrapped: true,
                },
                depth,
            ),
            Inner::Script(script) => {
                if !writes.is_empty() {
                    self.out.commands.push(SimpleCommand {
                        argv: Vec::new(),
                        writes,
                        wrapped: true,
                    });
                }
                let before = self.out.commands.len();
                self.script(&script, depth + 1);
                for command in &mut self.out.commands[before..] {
                    command.wrapped = true;
                }
            }
        }
    }

    /// What a builtin does to the commands after it.
    fn builtin_effects(&mut self, argv: &[Word]) {
        let Some(name) = argv.first().and_then(Word::as_static) else {
            return;
        };
        if STATE_BUILTINS.contains(&name) {
            self.out.opaque(format!(
                "`{name}` changes what later commands run or run with"
            ));
        }
        // `printf -v NAME` assigns.
        if name == "printf" && argv.iter().skip(1).any(|w| w.text().starts_with("-v")) {
            self.out.opaque("`printf -v` assigns a variable");
        }
        if matches!(name, "cd" | "pushd" | "popd") {
            self.out.cwd_changes = true;
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
                            self.pieces(&pieces, depth);
                            if doc.doc.value.contains("$[") {
                                self.out
                                    .opaque("arithmetic evaluates variables' values as code");
                            }
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
            Ok(pieces) => {
                let text = self.pieces(&pieces, depth);
                // `$[…]` is bash's old arithmetic, read by the parser as text.
                if raw.contains("$[") {
                    self.out
                        .opaque("arithmetic evaluates variables' values as code");
                }
                match text {
                    Some(text) if !expands(&pieces) => Word::Static(text),
                    _ => Word::Dynamic(raw.to_owned()),
                }
            }
            Err(_) => {
                self.out.opaque(format!("the word `{raw}` does not parse"));
                Word::Dynamic(raw.to_owned())
            }
        }
    }

    /// The static text of `pieces`, or `None` when part of it is only known
    /// when it runs.
    fn pieces(&mut self, pieces: &[WordPieceWithSource], depth: usize) -> Option<String> {
        let mut text = Some(String::new());
        for piece in pieces {
            let part = match &piece.piece {
                WordPiece::Text(s) | WordPiece::SingleQuotedText(s) => Some(s.clone()),
                WordPiece::EscapeSequence(s) => Some(s.strip_prefix('\\').unwrap_or(s).to_owned()),
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => self.pieces(inner, depth),
                WordPiece::CommandSubstitution(body)
                | WordPiece::BackquotedCommandSubstitution(body) => {
                    self.script(body, depth + 1);
                    None
                }
                WordPiece::ParameterExpansion(expr) => {
                    if let Some(nested) = parameter(expr, self.out) {
                        self.word(nested, depth);
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
