#include "pipeline/credentials.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace pp {

Credentials parseCredentials(const std::string& text, const std::string& where) {
  Credentials users;
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    auto colon = line.find(':');
    if (colon == 0 || colon == std::string::npos || colon + 1 == line.size())
      throw std::invalid_argument(where + " line " + std::to_string(number) + ": expected user:password");
    users.emplace_back(line.substr(0, colon), line.substr(colon + 1));
  }
  if (users.empty()) throw std::invalid_argument(where + ": no user:password line");
  return users;
}

Credentials readCredentials(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return parseCredentials(text.str(), path);
}

}  // namespace pp
