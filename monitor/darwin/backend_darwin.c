int tkm_darwin_placeholder;
