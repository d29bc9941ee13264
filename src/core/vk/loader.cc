// TODO(runtime): open libvulkan.so.1 at run time.
