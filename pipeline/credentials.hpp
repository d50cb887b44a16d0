// user:password credentials for the servers and brokers a sink talks to, from a file or a string
// (an environment variable).
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace pp {

using Credentials = std::vector<std::pair<std::string, std::string>>;  // user, password

// "user:password" lines (blank lines and # comments skipped); `where` names the source in errors.
// Throws std::invalid_argument naming the line that is not user:password, or when there is none.
Credentials parseCredentials(const std::string& text, const std::string& where);
// The same from a file; throws when it cannot be read.
Credentials readCredentials(const std::string& path);

}  // namespace pp
