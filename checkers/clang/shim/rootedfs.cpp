// rootedfs.cpp: RootedFS, the file system of a session (rootedfs.h).

#include "rootedfs.h"
#include "stream.h"

#include "clang/Lex/HeaderSearchOptions.h"
#include "clang/Lex/PreprocessorOptions.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cstdlib>
#include <string>
#include <vector>

using namespace clang;

namespace hydra {

namespace {

// RootedFS is the real file system cut down to a set of allowed roots. Checked text is written by
// a model, so `#include "/etc/passwd"`, `#include "../../x"` or a symlink out of the project must
// not make Clang read (and quote in diagnostics) files that are none of its business. A path whose
// real path (symlinks resolved, dots removed) is under no root does not exist as far as Clang can
// tell: the include ends in Clang's own fatal "'x' file not found", __has_include is false.
// A system include directory is judged by the path as spelled too (allowSystem): Debian 13 ships
// /usr/include/<triple>/asm/*.h as symlinks into /usr/lib/linux/uapi/, which Clang opens as
// <asm/errno.h> although no include directory holds their real paths.
// Everything else is the real file system, unchanged (names included, so diagnostics read as in a
// whole-file run). The main file is a remapped buffer: if its path does not exist, Clang never
// asks for it.
class RootedFS : public llvm::vfs::ProxyFileSystem {
public:
  explicit RootedFS(llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> FS)
      : ProxyFileSystem(std::move(FS)) {}

  // allow adds a root: a directory and all below it. A path that does not exist (yet) allows
  // nothing.
  void allow(const std::string &Path) {
    std::string Real;
    if (realPath(Path, Real))
      Roots.push_back(std::move(Real));
  }

  // allowFile adds a single file as a root. Its directory may then be stat'ed (FileManager looks
  // up a file's directory first) but nothing else in it is visible.
  void allowFile(const std::string &Path) {
    std::string Real;
    if (!realPath(Path, Real))
      return;
    FileDirs.push_back(llvm::sys::path::parent_path(Real).str());
    Roots.push_back(std::move(Real));
  }

  // allowSystem adds a system include directory (-isystem, the driver's /usr/include, libstdc++,
  // the resource dir): a root as allow's, and besides a path spelled under it is allowed
  // whatever its symlinks resolve to (systemSpelled). A directory inside the project is not a
  // system one: it gets allow's rule only, so a project's symlink out of it stays refused.
  void allowSystem(const std::string &Path) {
    std::string Real;
    if (!realPath(Path, Real))
      return;
    Roots.push_back(Real);
    if (!underAny(Real, Project))
      SystemDirs.push_back(spelled(Path));
  }

  // setProject names the project's directories (the checked file's and the root), before any
  // allowSystem: they are roots, and no path spelled in them is judged as a system one.
  void setProject(const std::vector<std::string> &Dirs) {
    for (const std::string &D : Dirs) {
      std::string Real;
      if (!realPath(D, Real))
        continue;
      Roots.push_back(Real);
      Project.push_back(Real);
      Project.push_back(spelled(D));
    }
  }

  llvm::ErrorOr<llvm::vfs::Status> status(const llvm::Twine &Path) override {
    // FileManager stats a chunk's virtual file once when it is made. It never exists on disk,
    // but it is said to (a fresh unique id, no disk access), so that FileManager gives its entry
    // a real path name next to the checked file: #embed "x" looks for x next to the real path
    // of the file it is in, as it does for the whole file.
    std::string P = Path.str();
    if (llvm::StringRef(P).contains(kChunkMark))
      return llvm::vfs::Status(P, llvm::vfs::getNextVirtualUniqueID(), {}, 0, 0, 0,
                               llvm::sys::fs::file_type::regular_file, llvm::sys::fs::all_read);
    if (!allowed(Path) && !isFileDir(Path))
      return notFound();
    return ProxyFileSystem::status(Path);
  }
  bool exists(const llvm::Twine &Path) override {
    return allowed(Path) && ProxyFileSystem::exists(Path);
  }
  llvm::ErrorOr<std::unique_ptr<llvm::vfs::File>>
  openFileForRead(const llvm::Twine &Path) override {
    if (!allowed(Path))
      return notFound();
    return ProxyFileSystem::openFileForRead(Path);
  }
  llvm::vfs::directory_iterator dir_begin(const llvm::Twine &Dir, std::error_code &EC) override {
    if (!allowed(Dir)) {
      EC = notFound();
      return {};
    }
    return ProxyFileSystem::dir_begin(Dir, EC);
  }
  std::error_code getRealPath(const llvm::Twine &Path,
                              llvm::SmallVectorImpl<char> &Output) override {
    if (!allowed(Path))
      return notFound();
    return ProxyFileSystem::getRealPath(Path, Output);
  }

private:
  static std::error_code notFound() {
    return std::make_error_code(std::errc::no_such_file_or_directory);
  }

  // realPath is realpath(3): relative paths are taken from the process's working directory, which
  // is the real file system's too. (Not vfs getRealPath: that opens the file to ask /proc, and an
  // open() of a FIFO outside the roots could block.)
  static bool realPath(const std::string &Path, std::string &Out) {
    if (Path.empty())
      return false;
    char *R = ::realpath(Path.c_str(), nullptr);
    if (!R)
      return false;
    Out = R;
    free(R);
    return true;
  }

  // spelled makes Path absolute (from the working directory) and drops "." components and
  // doubled slashes, lexically: symlinks and ".." stay as they are.
  static std::string spelled(const std::string &Path) {
    llvm::SmallString<256> P(Path);
    llvm::sys::fs::make_absolute(P);
    llvm::sys::path::remove_dots(P, /*remove_dot_dot=*/false);
    return std::string(P);
  }

  // under: Path is Dir or below it, compared as strings.
  static bool under(llvm::StringRef Path, llvm::StringRef Dir) {
    return Path.starts_with(Dir) &&
           (Path.size() == Dir.size() || Dir.ends_with("/") || Path[Dir.size()] == '/');
  }
  static bool underAny(llvm::StringRef Path, const std::vector<std::string> &Dirs) {
    return llvm::any_of(Dirs, [&](const std::string &D) { return under(Path, D); });
  }

  // allowed resolves Path and looks for a root that is it or one of its ancestors; failing that,
  // it asks systemSpelled. A path that cannot be resolved does not exist, or is in a directory we
  // may not search: refused either way. (Checked text cannot create files, so a path cannot
  // change between this check and the open that follows.)
  bool allowed(const llvm::Twine &Path) {
    std::string P = Path.str(), Real;
    if (!realPath(P, Real))
      return false;
    return underAny(Real, Roots) || systemSpelled(P, Real);
  }

  // systemSpelled: Path, as spelled, is a system include directory's own file: Clang joined the
  // directory's name and the rest of the path (an include's name, or a header's name relative to
  // the header that includes it), and the rest climbs nowhere (no ".." component), so the file is
  // one the system put there, through its symlinks (Debian 13's asm/*.h into
  // /usr/lib/linux/uapi/), as Clang itself would open it. Not in the project (its symlinks are
  // not the system's), and only a regular file or a directory, not in /proc, /sys or /dev: what a
  // symlink there resolves to is read, and a FIFO or a device would block or leak.
  bool systemSpelled(const std::string &Path, llvm::StringRef Real) const {
    if (SystemDirs.empty())
      return false;
    std::string P = spelled(Path);
    if (underAny(P, Project))
      return false;
    auto Dir = llvm::find_if(SystemDirs, [&](const std::string &D) { return under(P, D); });
    if (Dir == SystemDirs.end())
      return false;
    llvm::StringRef Rest = llvm::StringRef(P).drop_front(Dir->size());
    for (auto C = llvm::sys::path::begin(Rest), E = llvm::sys::path::end(Rest); C != E; ++C)
      if (*C == "..")
        return false;
    for (const char *Special : {"/proc", "/sys", "/dev"})
      if (under(Real, Special))
        return false;
    llvm::sys::fs::file_status St;
    if (llvm::sys::fs::status(Real, St))
      return false;
    return St.type() == llvm::sys::fs::file_type::regular_file ||
           St.type() == llvm::sys::fs::file_type::directory_file;
  }

  bool isFileDir(const llvm::Twine &Path) {
    std::string Real;
    return !FileDirs.empty() && realPath(Path.str(), Real) &&
           llvm::is_contained(FileDirs, Real);
  }

  std::vector<std::string> Roots;
  std::vector<std::string> FileDirs;   // directories of single-file roots
  std::vector<std::string> SystemDirs; // system include directories as spelled (systemSpelled)
  std::vector<std::string> Project;    // the project's directories, real and spelled
};
} // namespace

llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> guardFileSystem(const CompilerInvocation &Inv,
                                                                llvm::StringRef FileDir,
                                                                llvm::StringRef Root,
                                                                llvm::StringRef ClangPath) {
  auto FS = llvm::makeIntrusiveRefCnt<RootedFS>(llvm::vfs::getRealFileSystem());
  FS->setProject({FileDir.str(), Root.str()});
  FS->allow(llvm::sys::path::parent_path(llvm::sys::path::parent_path(ClangPath)).str()); // …/llvm-19
  const HeaderSearchOptions &HS = Inv.getHeaderSearchOpts();
  for (const HeaderSearchOptions::Entry &E : HS.UserEntries) { // user's and driver's, all groups
    // -iquote, -I (and header maps) are the user's; every other group is a system directory.
    if (E.Group == frontend::Quoted || E.Group == frontend::Angled ||
        E.Group == frontend::IndexHeaderMap)
      FS->allow(E.Path);
    else
      FS->allowSystem(E.Path);
  }
  FS->allowSystem(HS.ResourceDir);
  if (HS.Sysroot != "/") // the default sysroot "/" is no restriction to grant
    FS->allow(HS.Sysroot);
  for (const std::string &F : HS.VFSOverlayFiles)
    FS->allowFile(F);
  const PreprocessorOptions &PO = Inv.getPreprocessorOpts();
  for (const std::string &F : PO.Includes)
    FS->allowFile(F);
  for (const std::string &F : PO.MacroIncludes)
    FS->allowFile(F);
  FS->allowFile(PO.ImplicitPCHInclude);
  return FS;
}

} // namespace hydra
