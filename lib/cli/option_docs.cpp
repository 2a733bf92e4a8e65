#include "cli/option_docs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace tp {
namespace {

// What the documents say of one option, read from its CLI11 definition.
struct OptionDoc {
  std::vector<std::string> shorts;  // without the dash
  std::vector<std::string> longs;   // without the dashes
  std::string description;
  std::string value;  // the value's name (FILE, N, TEXT, ...); empty for a flag
  std::vector<std::string> choices;
  std::string default_value;
  std::string env;
  bool files = false;  // the value is a path
  bool repeatable = false;
};

struct CommandDoc {
  std::string name;  // the tool's own name, or a subcommand's
  std::string description;
  std::vector<OptionDoc> options;
  std::string positional;  // the name of a file operand, if the command takes one
  std::string positional_description;
  std::vector<CommandDoc> subcommands;
};

bool is_path_value(std::string_view value) {
  return value == "FILE" || value == "DEVICE" || value == "DIR" || value == "PATH";
}

// "TEXT:{auto,table,ndjson}" -> TEXT and its choices; "FLOAT:FLOAT in [0 - 1]" -> FLOAT.
void read_type_name(const std::string& type_name, OptionDoc& doc) {
  doc.value = type_name.substr(0, type_name.find(':'));
  const std::size_t open = type_name.find('{');
  const std::size_t close = type_name.find('}', open);
  if (open == std::string::npos || close == std::string::npos) return;
  std::string_view list = std::string_view(type_name).substr(open + 1, close - open - 1);
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    doc.choices.emplace_back(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
  }
}

OptionDoc option_doc(const CLI::Option& option) {
  OptionDoc doc;
  doc.shorts = option.get_snames();
  doc.longs = option.get_lnames();
  doc.description = option.get_description();
  if (option.get_expected_max() != 0) {  // a flag expects no value
    read_type_name(option.get_type_name(), doc);
    if (doc.value.empty()) doc.value = "VALUE";
    doc.default_value = option.get_default_str();
  }
  doc.env = option.get_envname();
  doc.files = is_path_value(doc.value);
  doc.repeatable = option.get_items_expected_max() > 1 ||
                   option.get_multi_option_policy() == CLI::MultiOptionPolicy::TakeAll ||
                   option.get_multi_option_policy() == CLI::MultiOptionPolicy::Join;
  return doc;
}

// The options of `app` as --help lists them (hidden ones, in no group, left out), with those
// of its option groups (nameless subcommands).
void add_options(const CLI::App& app, CommandDoc& doc) {
  for (const CLI::Option* option : app.get_options()) {
    if (option->get_group().empty()) continue;
    if (option->get_positional() && !option->nonpositional()) {
      doc.positional = option->get_name();
      doc.positional_description = option->get_description();
      continue;
    }
    doc.options.push_back(option_doc(*option));
  }
  for (const CLI::App* group : app.get_subcommands([](const CLI::App* sub) { return sub->get_name().empty(); })) {
    add_options(*group, doc);
  }
}

CommandDoc command_doc(const CLI::App& app) {
  CommandDoc doc;
  doc.name = app.get_name();
  doc.description = app.get_description();
  add_options(app, doc);
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App* sub) { return !sub->get_name().empty(); })) {
    doc.subcommands.push_back(command_doc(*sub));
  }
  return doc;
}

std::vector<std::string> spellings(const OptionDoc& option) {
  std::vector<std::string> names;
  for (const auto& name : option.longs) names.push_back("--" + name);
  for (const auto& name : option.shorts) names.push_back("-" + name);
  return names;
}

std::string joined(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

// The first line of a description (a few are two).
std::string summary(std::string_view description) {
  return std::string(description.substr(0, description.find('\n')));
}

std::string shell_function_name(std::string_view tool) {
  std::string name = "_";
  for (const char c : tool) name += (c == '-') ? '_' : c;
  return name;
}

std::string generated_note(std::string_view tool, std::string_view shell) {
  return fmt::format(
      "# {} completion for {}: generated from its option definitions (scripts/generate-docs);\n"
      "# do not edit.\n",
      shell, tool);
}

// ---- bash ---------------------------------------------------------------------------

void bash_value_cases(const CommandDoc& command, std::string& out) {
  for (const OptionDoc& option : command.options) {
    if (option.value.empty()) continue;
    out += fmt::format("    {})", joined(spellings(option), "|"));
    if (!option.choices.empty()) {
      out += fmt::format(" COMPREPLY=($(compgen -W \"{}\" -- \"$cur\")); return ;;\n", joined(option.choices, " "));
    } else if (option.files) {
      out += " COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n";
    } else {
      out += " return ;;\n";
    }
  }
  for (const CommandDoc& sub : command.subcommands) bash_value_cases(sub, out);
}

std::string bash_words(const CommandDoc& command, bool with_subcommands) {
  std::vector<std::string> words;
  for (const OptionDoc& option : command.options) {
    for (const auto& name : spellings(option)) words.push_back(name);
  }
  if (with_subcommands) {
    for (const CommandDoc& sub : command.subcommands) words.push_back(sub.name);
  }
  return joined(words, " ");
}

std::string bash_script(const CommandDoc& tool) {
  const std::string function = shell_function_name(tool.name);
  std::string out = generated_note(tool.name, "bash");
  out += fmt::format("{}() {{\n  local cur=${{COMP_WORDS[COMP_CWORD]}} prev=${{COMP_WORDS[COMP_CWORD-1]}}\n", function);
  if (!tool.subcommands.empty()) {
    std::vector<std::string> names;
    for (const CommandDoc& sub : tool.subcommands) names.push_back(sub.name);
    out += fmt::format(
        "  local command= word\n  for word in \"${{COMP_WORDS[@]:1:COMP_CWORD-1}}\"; do\n"
        "    case $word in {}) command=$word ;; esac\n  done\n",
        joined(names, "|"));
  }
  out += "  case $prev in\n";
  bash_value_cases(tool, out);
  out += "  esac\n";
  out += fmt::format("  local words=\"{}\"\n", bash_words(tool, true));
  if (!tool.subcommands.empty()) {
    out += "  case $command in\n";
    for (const CommandDoc& sub : tool.subcommands) {
      out += fmt::format("    {}) words=\"{}\" ;;\n", sub.name,
                         bash_words(tool, false) + (sub.options.empty() ? "" : " " + bash_words(sub, false)));
    }
    out += "  esac\n";
  }
  out += "  if [[ $cur == -* ]]; then\n    COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n";
  if (!tool.positional.empty()) {
    out += "  else\n    COMPREPLY=($(compgen -f -- \"$cur\"))\n";
  } else if (!tool.subcommands.empty()) {
    out += "  elif [[ -z $command ]]; then\n    COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n";
  }
  out += fmt::format("  fi\n}}\ncomplete -o filenames -F {} {}\n", function, tool.name);
  return out;
}

// ---- zsh ----------------------------------------------------------------------------

// Text inside an _arguments spec in single quotes: ' closes the quote, and [ ] : are the
// spec's own punctuation.
std::string zsh_text(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else if (c == '[' || c == ']' || c == ':' || c == '\\') {
      out += '\\';
      out += c;
    } else {
      out += c;
    }
  }
  return out;
}

std::string zsh_spec(const OptionDoc& option) {
  const std::vector<std::string> names = spellings(option);
  std::string action;
  if (!option.value.empty()) {
    action = ":" + zsh_text(option.value) + ":";
    if (!option.choices.empty()) {
      action += "(" + zsh_text(joined(option.choices, " ")) + ")";
    } else if (option.files) {
      action += "_files";
    }
  }
  const std::string description = "[" + zsh_text(summary(option.description)) + "]";
  if (names.size() == 1) {
    return fmt::format("'{}{}{}{}'", option.repeatable ? "*" : "", names[0], description, action);
  }
  const std::string exclusive = option.repeatable ? "*" : "(" + joined(names, " ") + ")";
  return fmt::format("'{}'{{{}}}'{}{}'", exclusive, joined(names, ","), description, action);
}

std::string zsh_specs(const CommandDoc& command, std::string_view indent) {
  std::string out;
  for (const OptionDoc& option : command.options) out += fmt::format("{}{} \\\n", indent, zsh_spec(option));
  return out;
}

std::string zsh_script(const CommandDoc& tool) {
  const std::string function = shell_function_name(tool.name);
  std::string out = fmt::format("#compdef {}\n", tool.name) + generated_note(tool.name, "zsh");
  out += fmt::format("{}() {{\n", function);
  if (tool.subcommands.empty()) {
    out += "  _arguments -s \\\n" + zsh_specs(tool, "    ");
    out +=
        tool.positional.empty() ? "    && return 0\n" : fmt::format("    '1:{}:_files'\n", zsh_text(tool.positional));
  } else {
    out += "  local curcontext=$curcontext state line\n  _arguments -C -s \\\n" + zsh_specs(tool, "    ");
    out += "    '1:command:->command' \\\n    '*::argument:->argument'\n";
    out += "  case $state in\n    command)\n      local -a commands=(\n";
    for (const CommandDoc& sub : tool.subcommands) {
      out += fmt::format("        '{}:{}'\n", sub.name, zsh_text(summary(sub.description)));
    }
    out += "      )\n      _describe command commands ;;\n    argument)\n      case $line[1] in\n";
    for (const CommandDoc& sub : tool.subcommands) {
      if (sub.options.empty()) continue;
      out += fmt::format("        {}) _arguments -s \\\n{}            && return 0 ;;\n", sub.name,
                         zsh_specs(sub, "            "));
    }
    out += "      esac ;;\n  esac\n";
  }
  out += fmt::format("}}\n{} \"$@\"\n", function);
  return out;
}

// ---- fish ---------------------------------------------------------------------------

std::string fish_text(std::string_view text) {
  std::string out = "'";
  for (const char c : text) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

void fish_options(const CommandDoc& command, std::string_view tool, std::string_view condition, std::string& out) {
  for (const OptionDoc& option : command.options) {
    out += fmt::format("complete -c {}", tool);
    if (!condition.empty()) out += fmt::format(" -n {}", fish_text(condition));
    for (const auto& name : option.shorts) out += " -s " + name;
    for (const auto& name : option.longs) out += " -l " + name;
    if (!option.choices.empty()) {
      out += " -x -a " + fish_text(joined(option.choices, " "));
    } else if (option.files) {
      out += " -r -F";
    } else if (!option.value.empty()) {
      out += " -x";
    }
    out += " -d " + fish_text(summary(option.description)) + "\n";
  }
}

std::string fish_script(const CommandDoc& tool) {
  std::string out = generated_note(tool.name, "fish");
  if (tool.positional.empty()) out += fmt::format("complete -c {} -f\n", tool.name);
  if (tool.subcommands.empty()) {
    fish_options(tool, tool.name, "", out);
    return out;
  }
  std::vector<std::string> names;
  for (const CommandDoc& sub : tool.subcommands) names.push_back(sub.name);
  fish_options(tool, tool.name, "", out);
  for (const CommandDoc& sub : tool.subcommands) {
    out += fmt::format("complete -c {} -n {} -a {} -d {}\n", tool.name,
                       fish_text("not __fish_seen_subcommand_from " + joined(names, " ")), sub.name,
                       fish_text(summary(sub.description)));
    fish_options(sub, tool.name, "__fish_seen_subcommand_from " + sub.name, out);
  }
  return out;
}

// ---- man ----------------------------------------------------------------------------

// Text for roff: a backslash is \e, a dash \-, and a line may not start with . or '.
std::string roff_text(std::string_view text) {
  std::string out;
  bool line_start = true;
  for (const char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
    line_start = c == '\n';
  }
  return out;
}

void man_entries(const CommandDoc& command, std::string& out) {
  for (const OptionDoc& option : command.options) {
    std::vector<std::string> names;
    for (const auto& name : option.shorts) names.push_back("\\fB\\-" + roff_text(name) + "\\fR");
    for (const auto& name : option.longs) names.push_back("\\fB\\-\\-" + roff_text(name) + "\\fR");
    out += ".TP\n" + joined(names, ", ");
    if (!option.value.empty()) out += " \\fI" + roff_text(option.value) + "\\fR";
    out += "\n" + roff_text(option.description);
    std::vector<std::string> notes;
    if (!option.choices.empty()) notes.push_back("one of: " + joined(option.choices, ", "));
    if (!option.default_value.empty()) notes.push_back("default: " + option.default_value);
    if (!option.env.empty()) notes.push_back("environment: " + option.env);
    if (option.repeatable && !option.value.empty()) notes.emplace_back("repeatable");
    if (!notes.empty()) out += " (" + roff_text(joined(notes, "; ")) + ")";
    out += "\n";
  }
}

}  // namespace

std::optional<std::string> completion_script(const CLI::App& app, std::string_view shell) {
  const CommandDoc tool = command_doc(app);
  if (shell == "bash") return bash_script(tool);
  if (shell == "zsh") return zsh_script(tool);
  if (shell == "fish") return fish_script(tool);
  return std::nullopt;
}

std::string man_options(const CLI::App& app) {
  const CommandDoc tool = command_doc(app);
  std::string out = ".SH OPTIONS\n";
  if (!tool.positional.empty()) {
    out += fmt::format(".TP\n\\fI{}\\fR\n{}\n", roff_text(tool.positional), roff_text(tool.positional_description));
  }
  man_entries(tool, out);
  for (const CommandDoc& sub : tool.subcommands) {
    const bool only_help = sub.options.size() == 1 && sub.options[0].longs == std::vector<std::string>{"help"};
    if (sub.options.empty() || only_help) continue;  // a subcommand without options of its own
    out += fmt::format(".SS {} {}\n", roff_text(tool.name), roff_text(sub.name));
    man_entries(sub, out);
  }
  return out;
}

}  // namespace tp
