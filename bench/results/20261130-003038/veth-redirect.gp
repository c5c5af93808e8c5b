# gnuplot veth-redirect.gp (in this directory) redraws veth-redirect.png
set terminal pngcairo size 680,640 font 'sans,9'
set output 'veth-redirect.png'
set datafile missing 'nan'
set title "veth-redirect: live frames -> veth -> xdp_redirect_map -> veth pair -> xdp_rxq_info\n5 rounds; bars: median, whiskers: min-max" noenhanced
set style fill solid 0.5 border -1
set grid ytics
set yrange [0:*]
set xrange [-0.6:5.6]
set bmargin 13
set xtics rotate by -40 left noenhanced
set key top right noenhanced
set ylabel "received Mpps, ratio to GRO on + no program"
set boxwidth 0.6
plot 1 with lines dt 2 lc 'gray' notitle, 'veth-redirect.dat' using ($1+0):3:4:5:(0.6):xtic(2) with boxerrorbars title "× baseline"
