int x_info_placeholder;
