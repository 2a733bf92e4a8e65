# Files that another program reads from a directory of its own (udev rules, shell
# completions) go where that program looks for the prefix given when installing
# (`cmake --install --prefix` may differ from the configured one, so the choice is made then):
#   - prefix /usr (a distribution's package; cpack's staging .../usr too): the vendor
#     directories under it (/usr/lib/udev/rules.d, /usr/share/zsh/vendor-completions, ...);
#   - any other prefix (/usr/local, /opt/...): where the program looks whatever its own
#     prefix: udev reads only /etc/udev/rules.d and /usr/lib/udev/rules.d, fish reads
#     /etc/fish/completions always but PREFIX/share/fish only when XDG_DATA_DIRS names it, zsh
#     has /usr/local/share/zsh/site-functions on its fpath.
# TRACEPIPE_SYSCONFDIR is the /etc of the second case; a prefix owned by a user can point it at
# ~/.config (fish reads ~/.config/fish/completions).
set(TRACEPIPE_SYSCONFDIR "/etc" CACHE PATH
    "Where udev rules and fish completions go when the install prefix is not /usr (udev and fish look there)")

# tracepipe_install_for_prefix(USR_DIR OTHER_DIR FILES...): a relative directory is under the prefix.
function(tracepipe_install_for_prefix usr_dir other_dir)
  set(files)
  foreach(file IN LISTS ARGN)
    string(APPEND files " \"${file}\"")
  endforeach()
  install(CODE "
    set(tracepipe_dir \"${other_dir}\")
    if(CMAKE_INSTALL_PREFIX MATCHES \"(^|/)usr/?$\")
      set(tracepipe_dir \"${usr_dir}\")
    endif()
    if(NOT IS_ABSOLUTE \"\${tracepipe_dir}\")
      set(tracepipe_dir \"\${CMAKE_INSTALL_PREFIX}/\${tracepipe_dir}\")
    endif()
    file(INSTALL DESTINATION \"\${tracepipe_dir}\" TYPE FILE FILES${files})")
endfunction()
