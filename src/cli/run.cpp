int x_run_placeholder;
