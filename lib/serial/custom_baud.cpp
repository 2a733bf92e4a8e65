// termios2 lives in <asm/termbits.h>, which cannot share a translation unit with
// <termios.h>; this file holds the one function that needs it.
#include <asm/ioctls.h>
#include <asm/termbits.h>

#include <cstdint>

extern "C" int ioctl(int fd, unsigned long request, ...) noexcept;  // NOLINT: <sys/ioctl.h> clashes with asm/termbits

namespace tp {

bool set_custom_baud(int fd, std::uint32_t baud) noexcept {
  termios2 settings{};
  if (ioctl(fd, TCGETS2, &settings) != 0) return false;
  settings.c_cflag &= ~static_cast<tcflag_t>(CBAUD);
  settings.c_cflag |= BOTHER;
  settings.c_ispeed = baud;
  settings.c_ospeed = baud;
  return ioctl(fd, TCSETS2, &settings) == 0;
}

}  // namespace tp
