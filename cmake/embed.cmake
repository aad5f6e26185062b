# attnviz_embed(NAME OUT_BASE FILE...) turns files into C++ byte arrays at build time.
# Generates OUT_BASE.h / OUT_BASE.cpp declaring
#   const EmbeddedFile* NAME_find(const char* file_name);   // nullptr if absent
#   const EmbeddedFile* NAME_files(size_t* count);          // every file
set(ATTNVIZ_EMBED_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/embed_run.cmake")
function(attnviz_embed name out_base)
  set(files ${ARGN})
  add_custom_command(
    OUTPUT "${out_base}.h" "${out_base}.cpp"
    COMMAND ${CMAKE_COMMAND} -DNAME=${name} -DOUT_BASE=${out_base} "-DFILES=${files}" -P "${ATTNVIZ_EMBED_SCRIPT}"
    DEPENDS ${files} "${ATTNVIZ_EMBED_SCRIPT}"
    COMMENT "Embedding ${name}"
    VERBATIM)
endfunction()
