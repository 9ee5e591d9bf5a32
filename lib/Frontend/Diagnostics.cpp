//===- Diagnostics.cpp - Spec source files and their diagnostics ----------===//

#include "attn/Frontend/Diagnostics.h"

#include <algorithm>

using namespace attn::frontend;

SourceFile::SourceFile(std::string name, std::string text)
    : name(std::move(name)), text(std::move(text)) {
  lineStarts.push_back(0);
  for (size_t i = 0; i < this->text.size(); ++i)
    if (this->text[i] == '\n')
      lineStarts.push_back(i + 1);
}

std::string SourceFile::getLine(int line) const {
  if (line < 1 || static_cast<size_t>(line) > lineStarts.size())
    return "";
  size_t begin = lineStarts[line - 1];
  size_t end = text.find('\n', begin);
  if (end == std::string::npos)
    end = text.size();
  std::string result = text.substr(begin, end - begin);
  if (!result.empty() && result.back() == '\r')
    result.pop_back();
  return result;
}

std::string SourceFile::render(SourceLocation loc, const std::string &message,
                               const char *severity) const {
  std::string out = name;
  if (loc.isValid())
    out += ":" + std::to_string(loc.line) + ":" + std::to_string(loc.column);
  out += std::string(": ") + severity + ": " + message + "\n";
  if (!loc.isValid())
    return out;
  std::string line = getLine(loc.line);
  out += line + "\n";
  // Keep tabs in the caret line so that the caret lines up under them.
  std::string caret;
  for (int i = 1; i < loc.column && static_cast<size_t>(i - 1) < line.size();
       ++i)
    caret += line[i - 1] == '\t' ? '\t' : ' ';
  out += caret + "^\n";
  return out;
}

//===----------------------------------------------------------------------===//
// Suggestions
//===----------------------------------------------------------------------===//

static size_t editDistance(const std::string &a, const std::string &b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1,
                         diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

/// "a, b or c".
std::string attn::frontend::listChoices(const std::vector<std::string> &choices) {
  std::string list;
  for (size_t i = 0; i < choices.size(); ++i) {
    if (i)
      list += i + 1 == choices.size() ? " or " : ", ";
    list += choices[i];
  }
  return list;
}

/// "; did you mean 'x'?" for a close candidate, else the list of choices.
std::string attn::frontend::suggest(const std::string &word,
                                   const std::vector<std::string> &choices) {
  // A suggestion must be closer than the word is long, so that one-letter
  // names do not "suggest" every other one-letter name; ties go to the
  // choice that extends the word (`elu` → `elu1`).
  const std::string *best = nullptr;
  size_t bestDistance = std::min<size_t>(3, word.size());
  bool bestExtends = false;
  for (const std::string &choice : choices) {
    size_t distance = editDistance(word, choice);
    bool extends = choice.compare(0, word.size(), word) == 0;
    if (distance < bestDistance ||
        (best && distance == bestDistance && extends && !bestExtends)) {
      best = &choice;
      bestDistance = distance;
      bestExtends = extends;
    }
  }
  if (best)
    return "; did you mean '" + *best + "'?";
  return "; expected " + listChoices(choices);
}
